// A merchant's offers as the earn rules read them (core/rules/eligibility.ts), for the two
// places that decide earnings: the API's eligibility answers and the settlement step. One SQL
// fragment (a subquery yielding a jsonb array, so it fits inside each one-statement read) and
// one conversion, so both sides always see the same offer terms.
import { Prisma } from '../../prisma/generated/client';
import { fromDbMinor } from '../ledger';
import type { EarnOffer } from '../rules/eligibility';
import type { CatalogueStatus } from '../rules/offer-status';
import { budgetPeriodKey, budgetState, type BudgetPeriod } from '../rules/budget';
import type { FundingTerms } from '../rules/funding';
import type { Audience } from '../rules/audience';
import { isCumulative, type StoredReward } from '../rules/reward-kinds';
import type { Targeting } from '../rules/eligibility';
import { enrol, enrolmentsForRead, isTargeted, type EnrollingGroup, type OfferActivation } from './enrolment';
import type { SqlTx } from '../../prisma/sql-transaction';

/** An offer as the fragment yields it: amounts as text (bigint), instants as ISO text. */
export interface JsonOffer {
  id: string;
  cashbackRateBps: number;
  brandedRateBps: number;
  minSpendMinor: string;
  maxRewardMinor: string | null;
  maxRewardPerChgMinor: string | null;
  maxRedemptionsPerChg: number | null;
  mccs: string[] | null;
  startsAt: string;
  endsAt: string | null;
  status: CatalogueStatus;
  /** The offer's own return window for cashback holds; null: the issuer's. Not an earn rule. */
  returnPeriodDays: number | null;
  /** The budget's limit (null: unlimited) and period, and what the period of the instant asked for has used. */
  budgetMinor: string | null;
  budgetPeriod: BudgetPeriod;
  budgetUsedMinor: string | null;
  issuerShareBps: number;
  commissionRateBps: number;
  commissionFlatMinor: string;
  activation: OfferActivation;
  audience: Audience | null;
  holdoutBps: number;
  /** Every reward kind but percent (null: the flat rates pay). */
  reward: StoredReward | null;
  priority: number;
  /** With a group asked about: its stored enrolment in a targeted offer (null: none yet). */
  enrolment?: { inAudience: boolean; arm: 'treated' | 'control' | null; detail: string } | null;
}

/** A reward event's (or running total's) effect on what the group kept of an offer: earned minus
 *  clawed back; other types count 0. For per-group caps. */
export const KEPT_OF_OFFER = Prisma.sql`CASE WHEN type IN ('cashback_earned', 'branded_earned') THEN amount_minor
  WHEN type IN ('cashback_clawed_back', 'branded_clawed_back') THEN -amount_minor ELSE 0 END`;

/**
 * Every offer of the merchant, by startsAt then id, as a jsonb array ([] when none). With
 * `budgetAt`, each budgeted offer carries what its budget has used in the period that instant
 * falls in (its calendar month, or its life): a primary-key read of offer_budget per budgeted
 * offer, without a lock (the settlement's write re-checks it under the row's lock).
 */
export function merchantOffersJson(
  merchantId: string,
  budgetAt: Date | null = null,
  enrolledChgId: string | null = null,
): Prisma.Sql {
  // A primary-key read per targeted offer, in the same statement: the hot path pays nothing more
  // for untargeted offers, and nothing but this for a group already enrolled.
  const enrolment =
    enrolledChgId === null
      ? Prisma.sql`NULL`
      : Prisma.sql`CASE WHEN o.activation = 'auto' OR o.audience IS NOT NULL OR o.holdout_bps > 0 THEN
                     (SELECT jsonb_build_object('inAudience', en.in_audience, 'arm', en.arm, 'detail', en.detail)
                        FROM offer_enrolment en WHERE en.offer_id = o.id AND en.chg_id = ${enrolledChgId}) END`;
  const used =
    budgetAt === null
      ? Prisma.sql`NULL`
      : Prisma.sql`(SELECT b.used_minor::text FROM offer_budget b
                     WHERE o.budget_minor IS NOT NULL AND b.offer_id = o.id
                       AND b.period = CASE WHEN o.budget_period = 'month' THEN ${budgetPeriodKey('month', budgetAt)} ELSE '' END)`;
  return Prisma.sql`(SELECT coalesce(jsonb_agg(jsonb_build_object('id', o.id, 'cashbackRateBps', o.cashback_rate_bps, 'brandedRateBps', o.branded_rate_bps,
              'minSpendMinor', o.min_spend_minor::text, 'maxRewardMinor', o.max_reward_minor::text, 'maxRewardPerChgMinor', o.max_reward_per_chg_minor::text,
              'maxRedemptionsPerChg', o.max_redemptions_per_chg,
              'mccs', o.mccs, 'startsAt', o.starts_at, 'endsAt', o.ends_at, 'status', o.status, 'returnPeriodDays', o.return_period_days,
              'budgetMinor', o.budget_minor::text, 'budgetPeriod', o.budget_period, 'budgetUsedMinor', ${used},
              'issuerShareBps', o.funding_issuer_share_bps, 'commissionRateBps', o.commission_rate_bps,
              'commissionFlatMinor', o.commission_flat_minor::text, 'activation', o.activation, 'audience', o.audience,
              'holdoutBps', o.holdout_bps, 'reward', o.reward, 'priority', o.priority, 'enrolment', ${enrolment})
              ORDER BY o.starts_at, o.id), '[]'::jsonb)
         FROM offer o WHERE o.merchant_id = ${merchantId})`;
}

/** Who funds the offer's rewards and what the merchant owes for them. */
export function fundingTermsOf(o: JsonOffer): FundingTerms {
  return {
    issuerShareBps: o.issuerShareBps,
    commissionRateBps: o.commissionRateBps,
    commissionFlatMinor: fromDbMinor(o.commissionFlatMinor),
  };
}

/**
 * The offer's terms as stored; the caller applies what depends on the issuer (the effective branded
 * rate). `budgetAt`: the instant the budget was read for (merchantOffersJson's); null leaves the
 * budget out (unknown: the caller supplies it, or the offer is treated as unbudgeted).
 */
export function toEarnOffer(o: JsonOffer, budgetAt: Date | null = null): EarnOffer {
  return {
    budget:
      o.budgetMinor === null || budgetAt === null
        ? null
        : budgetState(fromDbMinor(o.budgetMinor), fromDbMinor(o.budgetUsedMinor ?? 0), o.budgetPeriod, budgetAt),
    id: o.id,
    startsAt: new Date(o.startsAt),
    endsAt: o.endsAt === null ? null : new Date(o.endsAt),
    catalogueStatus: o.status,
    minSpendMinor: fromDbMinor(o.minSpendMinor),
    // A list column read as NULL or [] both mean "every MCC" (writes never store []).
    mccs: o.mccs && o.mccs.length > 0 ? o.mccs : null,
    cashbackRateBps: o.cashbackRateBps,
    brandedRateBps: o.brandedRateBps,
    maxRewardMinor: o.maxRewardMinor === null ? null : fromDbMinor(o.maxRewardMinor),
    maxRewardPerChgMinor: o.maxRewardPerChgMinor === null ? null : fromDbMinor(o.maxRewardPerChgMinor),
    maxRedemptionsPerChg: o.maxRedemptionsPerChg ?? null,
    activation: o.activation,
    tiers: o.reward?.kind === 'tiered' ? o.reward.tiers : null,
    cumulative: o.reward && isCumulative(o.reward) ? o.reward : null,
    priority: o.priority,
  };
}

/**
 * The offers with the group's enrolment in each targeted one: as the statement read it, else
 * decided now, stored (`store`: a settlement or preview, the group's first evaluation) or only
 * shown (a read). Untargeted offers are left as they are, with no enrolment.
 */
export async function withEnrolments(
  tx: SqlTx,
  stored: readonly JsonOffer[],
  offers: EarnOffer[],
  p: { issuerId: string; chgId: string; merchantId: string; at: Date; store: boolean },
): Promise<EarnOffer[]> {
  const targeted = stored.filter(isTargeted);
  if (targeted.length === 0) return offers;
  const known = new Map<string, Targeting>();
  for (const o of targeted) if (o.enrolment) known.set(o.id, o.enrolment);
  const missing = targeted.filter((o) => !o.enrolment);
  if (missing.length > 0) {
    const group = await enrollingGroup(tx, p.issuerId, p.chgId);
    const terms = missing.map((o) => ({ ...o, merchantId: p.merchantId, startsAt: new Date(o.startsAt) }));
    const decided = group ? await (p.store ? enrol : enrolmentsForRead)(tx, group, terms, p.at) : new Map();
    for (const [offerId, e] of decided) known.set(offerId, e);
  }
  const byId = new Map(targeted.map((o) => [o.id, o]));
  return offers.map((o) => (byId.has(o.id) ? { ...o, enrolment: known.get(o.id) ?? null } : o));
}

async function enrollingGroup(tx: SqlTx, issuerId: string, chgId: string): Promise<EnrollingGroup | null> {
  const [row] = await tx.$queryRaw<Array<{ created_at: Date; segments: string[] }>>`
    SELECT created_at, segments FROM cardholder_group WHERE id = ${chgId} AND issuer_id = ${issuerId}`;
  return row ? { id: chgId, issuerId, createdAt: row.created_at, segments: row.segments } : null;
}
