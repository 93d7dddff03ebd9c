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

/** An offer as the fragment yields it: amounts as text (bigint), instants as ISO text. */
export interface JsonOffer {
  id: string;
  cashbackRateBps: number;
  brandedRateBps: number;
  minSpendMinor: string;
  maxRewardMinor: string | null;
  maxRewardPerChgMinor: string | null;
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
export function merchantOffersJson(merchantId: string, budgetAt: Date | null = null): Prisma.Sql {
  const used =
    budgetAt === null
      ? Prisma.sql`NULL`
      : Prisma.sql`(SELECT b.used_minor::text FROM offer_budget b
                     WHERE o.budget_minor IS NOT NULL AND b.offer_id = o.id
                       AND b.period = CASE WHEN o.budget_period = 'month' THEN ${budgetPeriodKey('month', budgetAt)} ELSE '' END)`;
  return Prisma.sql`(SELECT coalesce(jsonb_agg(jsonb_build_object('id', o.id, 'cashbackRateBps', o.cashback_rate_bps, 'brandedRateBps', o.branded_rate_bps,
              'minSpendMinor', o.min_spend_minor::text, 'maxRewardMinor', o.max_reward_minor::text, 'maxRewardPerChgMinor', o.max_reward_per_chg_minor::text,
              'mccs', o.mccs, 'startsAt', o.starts_at, 'endsAt', o.ends_at, 'status', o.status, 'returnPeriodDays', o.return_period_days,
              'budgetMinor', o.budget_minor::text, 'budgetPeriod', o.budget_period, 'budgetUsedMinor', ${used},
              'issuerShareBps', o.funding_issuer_share_bps, 'commissionRateBps', o.commission_rate_bps,
              'commissionFlatMinor', o.commission_flat_minor::text)
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
  };
}
