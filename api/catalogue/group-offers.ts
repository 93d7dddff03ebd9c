// A group's offer list (GET /api/v2/chg/{chgId}/offers and a merchant's offers under a group) in
// one named statement: the group's existence, whether a live targeted offer still lacks the
// group's enrolment, and the page of offers it is shown, with their merchants and the group's
// activation of each. An app opens its offer screen far more often than anything changes, and
// with hundreds of live offers the Prisma reads this replaces (four statements, each planned
// anew) were most of the request.
//
// The filters say in SQL what the presented offer says: `status` as offerStatusAt
// (core/rules/offer-status.ts) computes it, live only while the merchant is active too; `type`
// by the effective branded rate (core/rules/branded-rate.ts: a rate, a merchant with branded
// balance, an expiry beyond the issuer's delay); the offers a group is shown (untargeted ones,
// and targeted ones it is treated for); the merchants the issuer sees (scope.ts, visibleTo); the
// (startsAt, id) order and its cursor. test/api/catalogue.test.ts holds each filter to the
// status and rates the page presents.
import type { Offer } from '../../prisma/generated/client';
import type { Db } from '../../prisma/client';
import { hotQuery, type HotStatement } from '../../prisma/hot';
import type { OfferMerchant, PresentedOffer } from './present';

export interface GroupOfferQuery {
  issuerId: string;
  chgId: string;
  /** The issuer's clock. */
  now: Date;
  merchantId?: string;
  status?: 'scheduled' | 'active' | 'ended';
  type?: 'cashback' | 'branded';
  issuerDelayDays: number;
  after?: { startsAt: Date; id: string };
  /** Rows to read: the page's limit and one more, which says whether a next page exists. */
  take: number;
}

export type ListedOffer = PresentedOffer & { merchant: OfferMerchant; activated: boolean };

export interface GroupOfferPage {
  groupFound: boolean;
  /** A live targeted offer has no enrolment of the group yet: enrol it, then read again. */
  enrolmentPending: boolean;
  offers: ListedOffer[];
}

// $1 issuer, $2 group, $3 now, $4 merchant or null, $5 status or null, $6 type or null,
// $7 the issuer's branded availability delay, $8 and $9 the cursor's startsAt and id or null,
// $10 rows to read. One row per offer of the page, or one row of NULL offer columns when the page
// is empty; none when the group is not the issuer's.
const VISIBLE = `(m.issuer_ids IS NULL OR $1 = ANY (m.issuer_ids)) AND ($4::text IS NULL OR o.merchant_id = $4)`;
const LIVE = `o.status = 'active' AND o.starts_at <= $3 AND (o.ends_at IS NULL OR o.ends_at > $3)`;
const TARGETED = `(o.activation = 'auto' OR o.holdout_bps > 0 OR o.audience IS NOT NULL)`;

// The group and its pending check are read once (a materialised CTE), not once per offer of the
// page; the enrolments are read once as a hashed set (NOT IN, IN), never probed per offer.
// test/api/hot-plans.test.ts holds the generic plan to it.
export const GROUP_OFFER_PAGE: HotStatement = {
  name: 'group_offer_page_v1',
  text: `
    WITH grp AS MATERIALIZED (
      SELECT g.id,
             EXISTS (
               SELECT 1 FROM offer o JOIN merchant m ON m.id = o.merchant_id
                WHERE ${VISIBLE} AND ${LIVE} AND ${TARGETED}
                  AND o.id NOT IN (SELECT e.offer_id FROM offer_enrolment e WHERE e.chg_id = g.id)
             ) AS enrolment_pending
        -- By its primary key alone (decision 0010): the issuer is checked on the one row found.
        FROM (SELECT g0.id, g0.issuer_id FROM cardholder_group g0 WHERE g0.id = $2 OFFSET 0) g
       WHERE g.issuer_id = $1)
    SELECT grp.enrolment_pending, p.*
      FROM grp
      LEFT JOIN LATERAL (
        SELECT o.id, o.merchant_id, o.title, o.description, o.cashback_rate_bps, o.branded_rate_bps,
               o.min_spend_minor::text, o.max_reward_minor::text, o.max_reward_per_chg_minor::text,
               o.return_period_days, o.budget_minor::text, o.budget_period, o.funding_issuer_share_bps,
               o.activation, o.audience, o.holdout_bps, o.mccs, o.starts_at, o.ends_at, o.status,
               m.status AS merchant_status, m.branded_enabled, m.branded_availability_delay_days,
               m.branded_expiry_days,
               o.merchant_id IN (SELECT a.merchant_id FROM activation a
                                  WHERE a.chg_id = grp.id AND a.status = 'active') AS activated
          FROM offer o JOIN merchant m ON m.id = o.merchant_id
         WHERE ${VISIBLE}
           AND (NOT ${TARGETED}
                OR o.id IN (SELECT e.offer_id FROM offer_enrolment e WHERE e.chg_id = grp.id AND e.arm = 'treated'))
           AND CASE $5::text
                 WHEN 'scheduled' THEN o.status = 'active' AND m.status = 'active' AND o.starts_at > $3
                                       AND (o.ends_at IS NULL OR o.ends_at > $3)
                 WHEN 'active' THEN m.status = 'active' AND ${LIVE}
                 WHEN 'ended' THEN o.status = 'inactive' OR m.status = 'inactive' OR o.ends_at <= $3
                 ELSE true END
           AND CASE $6::text
                 WHEN 'cashback' THEN o.cashback_rate_bps > 0
                 WHEN 'branded' THEN o.branded_rate_bps > 0 AND m.branded_enabled AND m.branded_expiry_days > $7::int
                 ELSE true END
           AND ($8::timestamptz IS NULL OR (o.starts_at, o.id) > ($8::timestamptz, $9::text))
         ORDER BY o.starts_at, o.id
         LIMIT $10) p ON true`,
};

interface PageRow {
  enrolment_pending: boolean;
  id: string | null;
  merchant_id: string;
  title: string;
  description: string | null;
  cashback_rate_bps: number;
  branded_rate_bps: number;
  min_spend_minor: string;
  max_reward_minor: string | null;
  max_reward_per_chg_minor: string | null;
  return_period_days: number | null;
  budget_minor: string | null;
  budget_period: string | null;
  funding_issuer_share_bps: number;
  activation: string;
  audience: Offer['audience'];
  holdout_bps: number;
  mccs: string[] | null;
  starts_at: Date;
  ends_at: Date | null;
  status: string;
  merchant_status: string;
  branded_enabled: boolean;
  branded_availability_delay_days: number;
  branded_expiry_days: number;
  activated: boolean;
}

const bigintOrNull = (v: string | null) => (v === null ? null : BigInt(v));

/** The row as presentIssuerOffer reads an offer: the fields it presents, in Prisma's types. */
function toListedOffer(r: PageRow): ListedOffer {
  return {
    id: r.id!,
    merchantId: r.merchant_id,
    title: r.title,
    description: r.description,
    cashbackRateBps: r.cashback_rate_bps,
    brandedRateBps: r.branded_rate_bps,
    minSpendMinor: BigInt(r.min_spend_minor),
    maxRewardMinor: bigintOrNull(r.max_reward_minor),
    maxRewardPerChgMinor: bigintOrNull(r.max_reward_per_chg_minor),
    returnPeriodDays: r.return_period_days,
    budgetMinor: bigintOrNull(r.budget_minor),
    budgetPeriod: r.budget_period,
    fundingIssuerShareBps: r.funding_issuer_share_bps,
    activation: r.activation,
    audience: r.audience,
    holdoutBps: r.holdout_bps,
    // As Prisma reads a NULL list (present.ts, nullableList).
    mccs: r.mccs ?? [],
    startsAt: r.starts_at,
    endsAt: r.ends_at,
    status: r.status,
    merchant: {
      status: r.merchant_status,
      brandedEnabled: r.branded_enabled,
      brandedAvailabilityDelayDays: r.branded_availability_delay_days,
      brandedExpiryDays: r.branded_expiry_days,
    },
    activated: r.activated,
  };
}

export async function readGroupOfferPage(db: Db, q: GroupOfferQuery): Promise<GroupOfferPage> {
  const rows = await hotQuery<PageRow>(db, GROUP_OFFER_PAGE, [
    q.issuerId,
    q.chgId,
    q.now,
    q.merchantId ?? null,
    q.status ?? null,
    q.type ?? null,
    q.issuerDelayDays,
    q.after?.startsAt ?? null,
    q.after?.id ?? null,
    q.take,
  ]);
  if (rows.length === 0) return { groupFound: false, enrolmentPending: false, offers: [] };
  return {
    groupFound: true,
    enrolmentPending: rows[0].enrolment_pending,
    offers: rows.filter((r) => r.id !== null).map(toListedOffer),
  };
}
