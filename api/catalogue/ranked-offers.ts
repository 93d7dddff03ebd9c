// A group's offers by relevance (`sort=relevance`, decision 0053): each offer's relevance to the
// group from its purchase history (core/rules/relevance.ts), highest first, ties by the earliest
// start, then id. Unlike the other orders it is the group's own, so it is ordered for each list:
// a few hundred offers scored and sorted, against the group's history read with the group's view
// (group-offers.ts, GROUP_RANKED_VIEW). What does not depend on the group (each offer
// in the formula's terms, where each id stands) is worked out once per held catalogue and issuer
// delay, and what the history says of a merchant once per list, not once per offer (of the
// merchants the group never bought at, once per category: the history says the same of each).
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
import type { OrderedOffers } from './offer-order';

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
  /** The order for a group without history, once asked for. */
  unranked?: RankedOffers;
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
  const n = held.length;
  const scores = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t = terms[i];
    const key = habits.byMerchant.has(t.merchantId) ? t.merchantId : `category ${t.category}`;
    let pull = pulls.get(key);
    if (!pull) pulls.set(key, (pull = merchantPullOf(t.merchantId, t.category, habits)));
    scores[i] = relevanceWithPull(t, pull);
  }
  const order = relevanceOrder(scores);
  const offers = new Array<CatalogueOffer>(n);
  const keys = new Array<number>(n);
  const ties = new Array<number>(n);
  for (let k = 0; k < n; k++) {
    const i = order[k];
    offers[k] = held[i];
    keys[k] = -scores[i];
    ties[k] = held[i].startsAt.getTime();
  }
  return {
    offers,
    keys,
    ties,
    relevance: { get: (offerId) => scores[indexById.get(offerId) ?? -1] },
  };
}

/**
 * The relevance order for a group without history, the same for every such group: kept per held
 * catalogue and issuer delay. A ranked page guesses its reach from it.
 */
export function unrankedOffers(held: readonly CatalogueOffer[], issuerDelayDays: number): RankedOffers {
  const terms = rankingTerms(held, issuerDelayDays);
  if (!terms.unranked) terms.unranked = rankedOffers(held, [], new Date(0), issuerDelayDays);
  return terms.unranked;
}

/**
 * The held offers' indexes, highest score first. The held catalogue is in (start, id) order, the
 * relevance order's tie-break, so an offer's index there breaks a tie. Both go into one number,
 * the negated score times n plus the index, and a numeric sort of a typed array orders them: no
 * object per offer and no comparison function called half a thousand times per list. A score too
 * large for that number to be exact is ordered by comparison instead.
 */
export function relevanceOrder(scores: Float64Array): Uint32Array {
  const n = scores.length;
  const order = new Uint32Array(n);
  let top = 0;
  for (let i = 0; i < n; i++) if (scores[i] > top) top = scores[i];
  if ((top + 1) * n > Number.MAX_SAFE_INTEGER) {
    for (let i = 0; i < n; i++) order[i] = i;
    return order.sort((a, b) => scores[b] - scores[a] || a - b);
  }
  const positions = new Float64Array(n);
  for (let i = 0; i < n; i++) positions[i] = -scores[i] * n + i;
  positions.sort();
  // A position's remainder by n is its index (exact: the remainder of doubles is).
  for (let k = 0; k < n; k++) order[k] = ((positions[k] % n) + n) % n;
  return order;
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
