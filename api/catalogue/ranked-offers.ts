// A group's offers by relevance (`sort=relevance`, decision 0053): each offer's relevance to the
// group from its purchase history (core/rules/relevance.ts), highest first, ties by the earliest
// start, then id. Unlike the other orders it is the group's own, so it is ordered for each list:
// a few hundred offers scored and sorted, against the group's history read in the list's one
// statement (group-offers.ts, GROUP_RANKED_VIEW). What does not depend on the group (each offer
// in the formula's terms, where each id stands) is worked out once per held catalogue and issuer
// delay, and what the history says of a merchant once per list, not once per offer.
import { brandedBalanceUsable, withUsableBranded } from '../../core/rules/branded-rate';
import {
  habitsOf,
  merchantPullOf,
  relevanceWithPull,
  type MerchantHistory,
  type MerchantPull,
  type RankedOffer,
} from '../../core/rules/relevance';
import type { StoredReward, Tier } from '../../core/rules/reward-kinds';
import type { CatalogueOffer } from './issuer-catalogue';
import { byPosition, type OrderedOffers } from './offer-order';

/** Each offer's relevance by id: the page's few are read, so no map of every offer is built. */
export interface RelevanceLookup {
  get(offerId: string): number | undefined;
}

/** The relevance order, and each offer's relevance (the list shows it). */
export interface RankedOffers extends OrderedOffers {
  relevance: RelevanceLookup;
}

/** The group-independent half: the held offers in the formula's terms, and where each id stands. */
interface RankingTerms {
  terms: RankedOffer[];
  indexById: Map<string, number>;
}

const termsByCatalogue = new WeakMap<readonly CatalogueOffer[], Map<number, RankingTerms>>();

function rankingTerms(held: readonly CatalogueOffer[], issuerDelayDays: number): RankingTerms {
  let byDelay = termsByCatalogue.get(held);
  if (!byDelay) termsByCatalogue.set(held, (byDelay = new Map()));
  let terms = byDelay.get(issuerDelayDays);
  if (!terms) {
    terms = {
      terms: held.map((offer) => rankedTerms(offer, issuerDelayDays)),
      indexById: new Map(held.map((offer, i) => [offer.id, i])),
    };
    byDelay.set(issuerDelayDays, terms);
  }
  return terms;
}

export function rankedOffers(
  held: readonly CatalogueOffer[],
  history: readonly MerchantHistory[],
  now: Date,
  issuerDelayDays: number,
): RankedOffers {
  const { terms, indexById } = rankingTerms(held, issuerDelayDays);
  const habits = habitsOf(history, now);
  const pulls = new Map<string, MerchantPull>();
  const scores = new Array<number>(held.length);
  const positioned = held.map((offer, i) => {
    const t = terms[i];
    let pull = pulls.get(t.merchantId);
    if (!pull) pulls.set(t.merchantId, (pull = merchantPullOf(t.merchantId, t.category, habits)));
    scores[i] = relevanceWithPull(t, pull);
    return { offer, key: -scores[i], tie: offer.startsAt.getTime(), id: offer.id };
  });
  positioned.sort(byPosition);
  return {
    offers: positioned.map((p) => p.offer),
    keys: positioned.map((p) => p.key),
    ties: positioned.map((p) => p.tie),
    relevance: { get: (offerId) => scores[indexById.get(offerId) ?? -1] },
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
