// Each issuer's offers, as its groups' offer lists read them, kept in memory by every API process
// (decision 0050). An app opens its offer screen far more often than the catalogue changes, and
// with hundreds of live offers reading them for every request was most of its cost. An entry is
// good for one catalogue version (migration 20261202170000: a number every transaction that
// changes an offer or a merchant moves, in that transaction); the list reads the number in the
// same statement as the group's enrolments, so a changed catalogue is read again before it is
// shown, never after: no time-out, no notification to miss.
import type { Offer } from '../../prisma/generated/client';
import { poolOf, type Db } from '../../prisma/client';
import type { OfferMerchant, PresentedOffer } from './present';

export type CatalogueOffer = PresentedOffer & {
  merchant: OfferMerchant;
  /** Shown only to the groups enrolled in it as treated (API.md, Targeted offers). */
  targeted: boolean;
  /** The merchant's category: a ranked list weighs the group's purchases in it (ranked-offers.ts). */
  merchantCategory: string;
};

export interface HeldCatalogue {
  version: bigint;
  /** By startsAt, then id (as JavaScript compares them, which the list's cursor does too). */
  offers: CatalogueOffer[];
}

/** Issuers kept: the oldest read goes first beyond it. */
const MAX_ISSUERS = 256;

export class IssuerCatalogue {
  private readonly entries = new Map<string, HeldCatalogue>();
  /** One read of an issuer's catalogue at a time, shared by the requests that wait for it. */
  private readonly reading = new Map<string, Promise<HeldCatalogue>>();

  constructor(private readonly maxIssuers = MAX_ISSUERS) {}

  /** What this process holds of the issuer's catalogue, of whatever version. */
  held(issuerId: string): HeldCatalogue | undefined {
    return this.entries.get(issuerId);
  }

  /** The issuer's catalogue as of `version` or later (read from the database when not held). */
  async atLeast(db: Db, issuerId: string, version: bigint): Promise<HeldCatalogue> {
    const held = this.entries.get(issuerId);
    if (held && held.version >= version) return held;
    let read = this.reading.get(issuerId);
    if (!read) {
      read = readCatalogue(db, issuerId).finally(() => this.reading.delete(issuerId));
      this.reading.set(issuerId, read);
    }
    const entry = await read;
    // A read begun before `version` was committed may predate it: read again.
    if (entry.version < version) return this.atLeast(db, issuerId, version);
    this.keep(issuerId, entry);
    return entry;
  }

  private keep(issuerId: string, entry: HeldCatalogue): void {
    const held = this.entries.get(issuerId);
    if (held && held.version >= entry.version) return;
    this.entries.delete(issuerId);
    if (this.entries.size >= this.maxIssuers) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(issuerId, entry);
  }
}

/** Whether offer `o` is targeted (core/domain/enrolment.ts, isTargeted), in SQL. */
export const TARGETED = `(o.activation = 'auto' OR o.holdout_bps > 0 OR o.audience IS NOT NULL)`;

// The version and the offers in one statement: one snapshot. One row of NULL offer columns when
// the issuer sees no offer.
const CATALOGUE = `
  SELECT v.version::text AS version, c.*
    FROM catalogue_version v
    LEFT JOIN (
      SELECT o.id, o.merchant_id, o.title, o.description, o.cashback_rate_bps, o.branded_rate_bps,
             o.min_spend_minor::text, o.max_reward_minor::text, o.max_reward_per_chg_minor::text, o.max_redemptions_per_chg,
             o.return_period_days, o.budget_minor::text, o.budget_period, o.funding_issuer_share_bps,
             o.activation, o.audience, o.holdout_bps, o.reward, o.priority, o.mccs, o.starts_at, o.ends_at, o.status,
             ${TARGETED} AS targeted,
             m.status AS merchant_status, m.branded_enabled, m.branded_availability_delay_days,
             m.branded_expiry_days, m.category AS merchant_category
        FROM offer o JOIN merchant m ON m.id = o.merchant_id
       WHERE m.issuer_ids IS NULL OR $1 = ANY (m.issuer_ids)) c ON true
   WHERE v.id = 1`;

interface CatalogueRow {
  version: string;
  id: string | null;
  merchant_id: string;
  title: string;
  description: string | null;
  cashback_rate_bps: number;
  branded_rate_bps: number;
  min_spend_minor: string;
  max_reward_minor: string | null;
  max_reward_per_chg_minor: string | null;
  max_redemptions_per_chg: number | null;
  return_period_days: number | null;
  budget_minor: string | null;
  budget_period: string | null;
  funding_issuer_share_bps: number;
  activation: string;
  audience: Offer['audience'];
  holdout_bps: number;
  reward: Offer['reward'];
  priority: number;
  mccs: string[] | null;
  starts_at: Date;
  ends_at: Date | null;
  status: string;
  targeted: boolean;
  merchant_status: string;
  branded_enabled: boolean;
  branded_availability_delay_days: number;
  branded_expiry_days: number;
  merchant_category: string;
}

async function readCatalogue(db: Db, issuerId: string): Promise<HeldCatalogue> {
  const { rows } = await poolOf(db).query<CatalogueRow>(CATALOGUE, [issuerId]);
  if (rows.length === 0) throw new Error('catalogue_version has no row: the migrations were not applied');
  const offers = rows.filter((r) => r.id !== null).map(toCatalogueOffer);
  offers.sort(byStartThenId);
  return { version: BigInt(rows[0].version), offers };
}

export function byStartThenId(a: { startsAt: Date; id: string }, b: { startsAt: Date; id: string }): number {
  return a.startsAt.getTime() - b.startsAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

const bigintOrNull = (v: string | null) => (v === null ? null : BigInt(v));

/** The row as presentIssuerOffer reads an offer: the fields it presents, in Prisma's types. */
function toCatalogueOffer(r: CatalogueRow): CatalogueOffer {
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
    maxRedemptionsPerChg: r.max_redemptions_per_chg,
    returnPeriodDays: r.return_period_days,
    budgetMinor: bigintOrNull(r.budget_minor),
    budgetPeriod: r.budget_period,
    fundingIssuerShareBps: r.funding_issuer_share_bps,
    activation: r.activation,
    audience: r.audience,
    holdoutBps: r.holdout_bps,
    reward: r.reward,
    priority: r.priority,
    // As Prisma reads a NULL list (present.ts, nullableList).
    mccs: r.mccs ?? [],
    startsAt: r.starts_at,
    endsAt: r.ends_at,
    status: r.status,
    targeted: r.targeted,
    merchantCategory: r.merchant_category,
    merchant: {
      status: r.merchant_status,
      brandedEnabled: r.branded_enabled,
      brandedAvailabilityDelayDays: r.branded_availability_delay_days,
      brandedExpiryDays: r.branded_expiry_days,
    },
  };
}
