// The orders a group's offer list reads in (`sort=`): each a total order on (key, offer id), the
// pair the page's cursor carries, so a page continues exactly where the last one ended whatever
// the order. The held catalogue is in `starts_at` order already (issuer-catalogue.ts); any other
// order is computed once per held catalogue (a new version is a new array) and issuer delay,
// which decides the branded rate an offer pays the issuer's groups; but relevance, which is the
// group's own (ranked-offers.ts) and is ordered for each list.
import { effectiveBrandedRateBps } from '../../core/rules/branded-rate';
import type { CatalogueOffer } from './issuer-catalogue';

export const OFFER_SORTS = ['starts_at', 'ends_at', 'reward', 'relevance'] as const;
/** The orders the same for every group of an issuer. */
export type CatalogueSort = Exclude<OfferSort, 'relevance'>;
export type OfferSort = (typeof OFFER_SORTS)[number];

/** Where an offer stands in an order: its key, then (relevance only: its start) its tie, then its id. */
export interface OfferPosition {
  key: number;
  tie?: number;
  id: string;
}

/**
 * The key of an offer in an order, smallest first: the earliest start; the earliest end, an
 * open-ended offer last; the most reward (its cashback and branded headline rates as the issuer's
 * groups are paid them), negated.
 */
export function sortKeyOf(o: CatalogueOffer, sort: CatalogueSort, issuerDelayDays: number): number {
  if (sort === 'starts_at') return o.startsAt.getTime();
  if (sort === 'ends_at') return o.endsAt === null ? Number.MAX_SAFE_INTEGER : o.endsAt.getTime();
  return -(o.cashbackRateBps + effectiveBrandedRateBps(o.brandedRateBps, o.merchant, issuerDelayDays));
}

export const byPosition = (a: OfferPosition, b: OfferPosition): number =>
  a.key - b.key || (a.tie ?? 0) - (b.tie ?? 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** The offers in one order, with each one's key (and tie, when the order has them) at the same index. */
export interface OrderedOffers {
  offers: CatalogueOffer[];
  keys: ArrayLike<number>;
  ties?: ArrayLike<number>;
}

const orders = new WeakMap<readonly CatalogueOffer[], Map<string, OrderedOffers>>();

export function orderedOffers(held: CatalogueOffer[], sort: CatalogueSort, issuerDelayDays: number): OrderedOffers {
  let byOrder = orders.get(held);
  if (!byOrder) orders.set(held, (byOrder = new Map()));
  // Only the reward order depends on the issuer's delay.
  const name = sort === 'reward' ? `reward:${issuerDelayDays}` : sort;
  let ordered = byOrder.get(name);
  if (!ordered) {
    const positioned = held.map((offer) => ({ offer, key: sortKeyOf(offer, sort, issuerDelayDays), id: offer.id }));
    // The held catalogue is in starts_at order by the same comparison: nothing moves for it.
    if (sort !== 'starts_at') positioned.sort(byPosition);
    ordered = { offers: positioned.map((p) => p.offer), keys: positioned.map((p) => p.key) };
    byOrder.set(name, ordered);
  }
  return ordered;
}

/** The index of the first offer after `after` in the order. */
export function firstAfter(ordered: OrderedOffers, after: OfferPosition): number {
  let low = 0;
  let high = ordered.offers.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    const at = { key: ordered.keys[mid], tie: ordered.ties?.[mid], id: ordered.offers[mid].id };
    if (byPosition(at, after) <= 0) low = mid + 1;
    else high = mid;
  }
  return low;
}
