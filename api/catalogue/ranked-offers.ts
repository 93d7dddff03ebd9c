// A group's offers by relevance (`sort=relevance`, decision 0053): each offer's relevance to the
// group from its purchase history (core/rules/relevance.ts), highest first, ties by the earliest
// start, then id. Unlike the other orders it is the group's own, so it is ordered for each list:
// a few hundred offers scored and sorted, against the group's history read in the list's one
// statement (group-offers.ts, GROUP_RANKED_VIEW).
import { brandedBalanceUsable, withUsableBranded } from '../../core/rules/branded-rate';
import { habitsOf, relevanceOf, type MerchantHistory, type RankedOffer } from '../../core/rules/relevance';
import type { StoredReward, Tier } from '../../core/rules/reward-kinds';
import type { CatalogueOffer } from './issuer-catalogue';
import { byPosition, type OrderedOffers } from './offer-order';

/** The relevance order, and each offer's relevance by id (the list shows it). */
export interface RankedOffers extends OrderedOffers {
  relevance: Map<string, number>;
}

export function rankedOffers(
  held: readonly CatalogueOffer[],
  history: readonly MerchantHistory[],
  now: Date,
  issuerDelayDays: number,
): RankedOffers {
  const habits = habitsOf(history, now);
  const relevance = new Map<string, number>();
  const positioned = held.map((offer) => {
    const score = relevanceOf(rankedTerms(offer, issuerDelayDays), habits);
    relevance.set(offer.id, score);
    return { offer, key: -score, tie: offer.startsAt.getTime(), id: offer.id };
  });
  positioned.sort(byPosition);
  return {
    offers: positioned.map((p) => p.offer),
    keys: positioned.map((p) => p.key),
    ties: positioned.map((p) => p.tie),
    relevance,
  };
}

/** The offer as the group's issuer pays it, in the formula's terms. */
function rankedTerms(offer: CatalogueOffer, issuerDelayDays: number): RankedOffer {
  const reward = offer.reward as StoredReward | null;
  const tiers: Tier[] | null = reward?.kind === 'tiered' ? reward.tiers : null;
  const usable = withUsableBranded(
    { brandedRateBps: offer.brandedRateBps, tiers },
    brandedBalanceUsable(offer.merchant, issuerDelayDays),
  );
  return {
    merchantId: offer.merchantId,
    category: offer.merchantCategory,
    minSpendMinor: Number(offer.minSpendMinor),
    cashbackRateBps: offer.cashbackRateBps,
    brandedRateBps: usable.brandedRateBps,
    tiers: usable.tiers ?? null,
    maxRewardMinor: offer.maxRewardMinor === null ? null : Number(offer.maxRewardMinor),
  };
}
