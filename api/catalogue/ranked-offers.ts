// A group's offers by relevance (`sort=relevance`, decision 0053): each offer's relevance to the
// group from its purchase history (core/rules/relevance.ts), highest first, ties by the earliest
// start, then id. Unlike the other orders it is the group's own, so it is ordered for each list,
// against the group's history read with the group's view (group-offers.ts, GROUP_RANKED_VIEW).
// What does not depend on the group is worked out once per held catalogue and issuer delay: each
// offer in the formula's terms, its score for a group without history, where each id stands, and
// the offers of each merchant and each category. A history moves only the offers at its merchants
// and in their categories, so only those are scored for the group, once per merchant's pull (at a
// merchant the group never bought at, its category's, the same for each such merchant).
import { brandedBalanceUsable, withUsableBranded } from '../../core/rules/branded-rate';
import {
  categoryPullOf,
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

/**
 * The group-independent half: the held offers in the formula's terms, where each id stands, each
 * offer's score for a group without history, and the offers of each merchant and each category by
 * index. A group's history changes the scores of the offers at its merchants and in its
 * categories only: every other offer keeps the score without history.
 */
interface RankingTerms {
  terms: RankedOffer[];
  indexById: Map<string, number>;
  baseScores: Float64Array;
  /** Each offer's start in ms: the order's tie. */
  startMs: Float64Array;
  offersOfMerchant: Map<string, Uint32Array>;
  offersOfCategory: Map<string, Uint32Array>;
  /** The order for a group without history, once asked for. */
  unranked?: RankedOffers;
}

const termsByCatalogue = new WeakMap<readonly CatalogueOffer[], Map<number, RankingTerms>>();

function rankingTerms(held: readonly CatalogueOffer[], issuerDelayDays: number): RankingTerms {
  let byDelay = termsByCatalogue.get(held);
  if (!byDelay) termsByCatalogue.set(held, (byDelay = new Map()));
  let ranking = byDelay.get(issuerDelayDays);
  if (!ranking) {
    const terms = held.map((offer) => rankedTerms(offer, issuerDelayDays));
    const none = habitsOf([], new Date(0));
    ranking = {
      terms,
      indexById: new Map(held.map((offer, i) => [offer.id, i])),
      baseScores: Float64Array.from(terms, (t) => relevanceWithPull(t, categoryPullOf(t.category, none))),
      startMs: Float64Array.from(held, (offer) => offer.startsAt.getTime()),
      offersOfMerchant: indexesBy(terms, (t) => t.merchantId),
      offersOfCategory: indexesBy(terms, (t) => t.category),
    };
    byDelay.set(issuerDelayDays, ranking);
  }
  return ranking;
}

function indexesBy(terms: readonly RankedOffer[], keyOf: (t: RankedOffer) => string): Map<string, Uint32Array> {
  const lists = new Map<string, number[]>();
  terms.forEach((t, i) => {
    const key = keyOf(t);
    const list = lists.get(key);
    if (list) list.push(i);
    else lists.set(key, [i]);
  });
  return new Map([...lists].map(([key, list]) => [key, Uint32Array.from(list)]));
}

export function rankedOffers(
  held: readonly CatalogueOffer[],
  history: readonly MerchantHistory[],
  now: Date,
  issuerDelayDays: number,
): RankedOffers {
  const ranking = rankingTerms(held, issuerDelayDays);
  const { terms } = ranking;
  const habits = habitsOf(history, now);
  // The offers the history touches, and the pull each takes: the categories first, so that an
  // offer at a merchant the group bought at then takes its merchant's pull.
  const touched: Array<[Uint32Array, MerchantPull]> = [];
  for (const category of habits.byCategory.keys()) {
    const offers = ranking.offersOfCategory.get(category);
    if (offers) touched.push([offers, categoryPullOf(category, habits)]);
  }
  for (const merchantId of habits.byMerchant.keys()) {
    const offers = ranking.offersOfMerchant.get(merchantId);
    if (offers) touched.push([offers, merchantPullOf(merchantId, terms[offers[0]].category, habits)]);
  }
  if (touched.length === 0) return unrankedOf(held, ranking);
  const scores = ranking.baseScores.slice();
  for (const [offers, pull] of touched) for (const i of offers) scores[i] = relevanceWithPull(terms[i], pull);
  return ordered(held, ranking, scores);
}

/**
 * The relevance order for a group without history, the same for every such group: kept per held
 * catalogue and issuer delay. A ranked page guesses its reach from it.
 */
export function unrankedOffers(held: readonly CatalogueOffer[], issuerDelayDays: number): RankedOffers {
  return unrankedOf(held, rankingTerms(held, issuerDelayDays));
}

function unrankedOf(held: readonly CatalogueOffer[], ranking: RankingTerms): RankedOffers {
  ranking.unranked ??= ordered(held, ranking, ranking.baseScores);
  return ranking.unranked;
}

function ordered(held: readonly CatalogueOffer[], ranking: RankingTerms, scores: Float64Array): RankedOffers {
  const order = relevanceOrder(scores);
  const n = held.length;
  const offers = new Array<CatalogueOffer>(n);
  const keys = new Float64Array(n);
  const ties = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    const i = order[k];
    offers[k] = held[i];
    keys[k] = -scores[i];
    ties[k] = ranking.startMs[i];
  }
  return {
    offers,
    keys,
    ties,
    relevance: { get: (offerId) => scores[ranking.indexById.get(offerId) ?? -1] },
  };
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
