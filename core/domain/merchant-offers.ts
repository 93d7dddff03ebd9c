// A merchant's offers as the earn rules read them (core/rules/eligibility.ts), for the two
// places that decide earnings: the API's eligibility answers and the settlement step. One SQL
// fragment (a subquery yielding a jsonb array, so it fits inside each one-statement read) and
// one conversion, so both sides always see the same offer terms.
import { Prisma } from '../../prisma/generated/client';
import { fromDbMinor } from '../ledger';
import type { EarnOffer } from '../rules/eligibility';
import type { CatalogueStatus } from '../rules/offer-status';

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
}

/** A reward event's (or running total's) effect on what the group kept of an offer: earned minus
 *  clawed back; other types count 0. For per-group caps. */
export const KEPT_OF_OFFER = Prisma.sql`CASE WHEN type IN ('cashback_earned', 'branded_earned') THEN amount_minor
  WHEN type IN ('cashback_clawed_back', 'branded_clawed_back') THEN -amount_minor ELSE 0 END`;

/** Every offer of the merchant, by startsAt then id, as a jsonb array ([] when none). */
export function merchantOffersJson(merchantId: string): Prisma.Sql {
  return Prisma.sql`(SELECT coalesce(jsonb_agg(jsonb_build_object('id', o.id, 'cashbackRateBps', o.cashback_rate_bps, 'brandedRateBps', o.branded_rate_bps,
              'minSpendMinor', o.min_spend_minor::text, 'maxRewardMinor', o.max_reward_minor::text, 'maxRewardPerChgMinor', o.max_reward_per_chg_minor::text,
              'mccs', o.mccs, 'startsAt', o.starts_at, 'endsAt', o.ends_at, 'status', o.status, 'returnPeriodDays', o.return_period_days)
              ORDER BY o.starts_at, o.id), '[]'::jsonb)
         FROM offer o WHERE o.merchant_id = ${merchantId})`;
}

/** The offer's terms as stored; the caller applies what depends on the issuer (the effective branded rate). */
export function toEarnOffer(o: JsonOffer): EarnOffer {
  return {
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
