// One group's view of one merchant, read in ONE statement for the hot per-merchant routes
// (earn and spend eligibility, the merchant balance): the group's ownership and state, the
// merchant if the issuer may see it, and only the parts a route asks for — offers, the
// group's activation, what the group kept per offer (for per-group caps, from the running
// totals), its open grants there. Missing and foreign ids answer the same 404s as
// requireGroup and requireVisibleMerchant (existence never leaks).
import { Prisma } from '../../prisma/generated/client';
import type { Db } from '../../prisma/client';
import { errors } from '../../core/errors';
import { fromDbMinor } from '../../core/ledger';
import type { CatalogueStatus } from '../../core/rules/offer-status';
import type { EarnOffer } from '../../core/rules/eligibility';
import { groupNotFound } from './scope';
import { brandedBalanceUsable, withUsableBranded } from '../../core/rules/branded-rate';
import type { MerchantStacking } from '../../core/rules/stacking';
import { merchantOffersJson, withEnrolments, toEarnOffer, type JsonOffer } from '../../core/domain/merchant-offers';
import { redeemedByOfferJson } from '../../core/domain/redemptions';

export interface GroupMerchant {
  group: { id: string; status: CatalogueStatus };
  merchant: {
    id: string;
    status: CatalogueStatus;
    brandedEnabled: boolean;
    brandedSpendMinimumMinor: number;
    brandedAvailabilityDelayDays: number;
    brandedExpiryDays: number;
    stacking: MerchantStacking;
    stackCapBps: number | null;
  };
  /** The merchant's offers as they earn: the effective branded rate (core/rules/branded-rate.ts). */
  offers: EarnOffer[];
  activation: { status: CatalogueStatus; activatedAt: Date } | null;
  earnedSoFarByOffer: Record<string, number>;
  /** The group's purchases keeping a reward from each offer that limits redemptions. */
  redeemedSoFarByOffer: Record<string, number>;
  /** Grants at the merchant that hold value and have not expired, spending order (FIFO by expiry). */
  grants: Array<{ id: string; remainingMinor: number; availableAt: Date; expiresAt: Date }>;
  /** Totals over all those grants (the list may be cut at its limit). */
  balance: { availableMinor: number; notYetAvailableMinor: number; expiringWithin30DaysMinor: number };
}

export interface Parts {
  /** The merchant's offers; with `budgetAt`, each budget as it stands for the period of that instant. */
  offers?: boolean | { budgetAt: Date };
  activation?: boolean;
  earned?: boolean;
  /** Open grants not expired at this instant, at most `limit`, and their totals. */
  grants?: { at: Date; limit: number };
}

const DAY_MS = 86_400_000;

interface Row {
  group_status: CatalogueStatus;
  merchant: (Omit<GroupMerchant['merchant'], 'brandedSpendMinimumMinor'> & { brandedSpendMinimumMinor: string }) | null;
  offers: JsonOffer[] | null;
  activation: { status: CatalogueStatus; activatedAt: string } | null;
  earned: Record<string, string> | null;
  redeemed: Record<string, number> | null;
  grants: Array<{ id: string; remainingMinor: string; availableAt: string; expiresAt: string }> | null;
  balance: { available: string; notYet: string; expiring30: string } | null;
}

export async function loadGroupMerchant(
  db: Db,
  issuer: { id: string; brandedAvailabilityDelayDays: number },
  chgId: string,
  merchantId: string,
  parts: Parts,
): Promise<GroupMerchant> {
  const issuerId = issuer.id;
  const none = Prisma.sql`NULL::jsonb`;
  const [row] = await db.$queryRaw<Row[]>`
    SELECT g.status AS group_status,
      (SELECT jsonb_build_object('id', m.id, 'status', m.status, 'brandedEnabled', m.branded_enabled,
              'brandedSpendMinimumMinor', m.branded_spend_minimum_minor::text, 'brandedAvailabilityDelayDays', m.branded_availability_delay_days,
              'brandedExpiryDays', m.branded_expiry_days, 'stacking', m.stacking, 'stackCapBps', m.stack_cap_bps)
         FROM merchant m WHERE m.id = ${merchantId} AND (m.issuer_ids IS NULL OR ${issuerId} = ANY(m.issuer_ids))) AS merchant,
      ${parts.offers ? merchantOffersJson(merchantId, budgetAtOf(parts), chgId) : none} AS offers,
      ${
        parts.activation
          ? Prisma.sql`(SELECT jsonb_build_object('status', a.status, 'activatedAt', a.activated_at)
         FROM activation a WHERE a.issuer_id = g.issuer_id AND a.chg_id = g.id AND a.merchant_id = ${merchantId})`
          : none
      } AS activation,
      ${
        parts.earned
          ? Prisma.sql`(SELECT coalesce(jsonb_object_agg(x.offer_id, x.net::text), '{}'::jsonb) FROM (
         SELECT offer_id, sum(CASE WHEN type IN ('cashback_earned', 'branded_earned') THEN amount_minor
                                   WHEN type IN ('cashback_clawed_back', 'branded_clawed_back') THEN -amount_minor ELSE 0 END) AS net
           FROM reward_total WHERE issuer_id = g.issuer_id AND chg_id = g.id AND merchant_id = ${merchantId} AND offer_id <> ''
          GROUP BY offer_id) x)`
          : none
      } AS earned,
      ${parts.earned ? redeemedByOfferJson({ issuerId, chgId, merchantId }) : none} AS redeemed,
      ${
        parts.grants
          ? Prisma.sql`(SELECT coalesce(jsonb_agg(jsonb_build_object('id', x.id, 'remainingMinor', x.remaining_minor::text,
              'availableAt', x.available_at, 'expiresAt', x.expires_at) ORDER BY x.expires_at, x.created_at, x.id), '[]'::jsonb)
         FROM (SELECT id, remaining_minor, available_at, expires_at, created_at FROM reward_grant
                WHERE issuer_id = g.issuer_id AND chg_id = g.id AND merchant_id = ${merchantId} AND remaining_minor > 0 AND expires_at > ${parts.grants.at}
                ORDER BY expires_at, created_at, id LIMIT ${parts.grants.limit}) x)`
          : none
      } AS grants,
      ${
        parts.grants
          ? Prisma.sql`(SELECT jsonb_build_object(
              'available', coalesce(sum(remaining_minor) FILTER (WHERE available_at <= ${parts.grants.at}), 0)::text,
              'notYet', coalesce(sum(remaining_minor) FILTER (WHERE available_at > ${parts.grants.at}), 0)::text,
              'expiring30', coalesce(sum(remaining_minor) FILTER (WHERE expires_at <= ${new Date(parts.grants.at.getTime() + 30 * DAY_MS)}), 0)::text)
         FROM reward_grant
        WHERE issuer_id = g.issuer_id AND chg_id = g.id AND merchant_id = ${merchantId} AND remaining_minor > 0 AND expires_at > ${parts.grants.at})`
          : none
      } AS balance
    FROM cardholder_group g WHERE g.id = ${chgId} AND g.issuer_id = ${issuerId}`;
  if (!row) throw groupNotFound(chgId);
  if (!row.merchant) throw errors.notFound('merchant_not_found', `No merchant ${merchantId}.`);
  const answer = toGroupMerchant(row, row.merchant, chgId, issuer.brandedAvailabilityDelayDays, budgetAtOf(parts));
  if (!row.offers) return answer;
  // A read shows a targeted offer's enrolment as it stands, or as it would be decided: the group's
  // first purchase stores it, not a question about it.
  const at = budgetAtOf(parts) ?? new Date();
  const offers = await withEnrolments(db, row.offers, answer.offers, { issuerId, chgId, merchantId, at, store: false });
  return { ...answer, offers };
}

const budgetAtOf = (parts: Parts): Date | null => (typeof parts.offers === 'object' ? parts.offers.budgetAt : null);

/** The statement's JSON columns as typed values, offers with the branded rate settlement pays. */
function toGroupMerchant(
  row: Row,
  stored: NonNullable<Row['merchant']>,
  chgId: string,
  issuerDelayDays: number,
  budgetAt: Date | null,
): GroupMerchant {
  const merchant = { ...stored, brandedSpendMinimumMinor: fromDbMinor(stored.brandedSpendMinimumMinor) };
  return {
    group: { id: chgId, status: row.group_status },
    merchant,
    // As settlement pays them.
    offers: (row.offers ?? []).map((o) =>
      withUsableBranded(toEarnOffer(o, budgetAt), brandedBalanceUsable(merchant, issuerDelayDays)),
    ),
    activation: row.activation && { status: row.activation.status, activatedAt: new Date(row.activation.activatedAt) },
    earnedSoFarByOffer: Object.fromEntries(
      Object.entries(row.earned ?? {}).map(([offerId, net]) => [offerId, fromDbMinor(net)]),
    ),
    redeemedSoFarByOffer: row.redeemed ?? {},
    grants: (row.grants ?? []).map((g) => ({
      id: g.id,
      remainingMinor: fromDbMinor(g.remainingMinor),
      availableAt: new Date(g.availableAt),
      expiresAt: new Date(g.expiresAt),
    })),
    balance: {
      availableMinor: fromDbMinor(row.balance?.available ?? 0),
      notYetAvailableMinor: fromDbMinor(row.balance?.notYet ?? 0),
      expiringWithin30DaysMinor: fromDbMinor(row.balance?.expiring30 ?? 0),
    },
  };
}
