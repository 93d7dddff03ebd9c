// A group's purchase history and its relevance order, kept in the API process for the group's next
// ranked list (decision 0063). The history only grows: each settlement adds one purchase to one of
// the group's rows (activities/lifecycle/merchant-history.ts), so the sum of its purchases changes
// with every change and says exactly whether the history moved since it was kept. The list's
// statement reads that sum instead of the history itself (each row with its merchant's category,
// as JSON) and sends the history only when it moved; the order is then the kept one, not worked
// out again. A group read for the first time, or whose history moved, is read and ranked in full.
//
// Kept per held catalogue, as the offers' terms are (ranked-offers.ts): a new catalogue version
// (an offer or a merchant changed, a merchant's category too) is a new held array, and what was
// kept for the old one goes with it. Besides the history, an order depends on the issuer's delay
// and on each merchant's whole days since the latest purchase, so it is kept with the span of
// instants over which those stay the same (core/rules/relevance.ts, habitsSpanOf).
import { habitsSpanOf, type MerchantHistory } from '../../core/rules/relevance';
import type { CatalogueOffer } from './issuer-catalogue';
import { rankedOffers, type RankedOffers } from './ranked-offers';

/** What a ranked list sends the statement when nothing is kept: no sum of purchases is negative. */
export const NOTHING_KEPT = '-1';

export interface KeptHistory {
  /** The group's purchases in all (chg_merchant_history), as text: what the statement compares. */
  stamp: string;
  history: readonly MerchantHistory[];
  /** The order last worked out from it, for one issuer delay, over [fromMs, untilMs). */
  order?: { issuerDelayDays: number; fromMs: number; untilMs: number; ranked: RankedOffers };
}

/**
 * Offers' places in kept orders, per process and held catalogue: each kept order holds one per
 * offer (about 24 bytes), so about 24 MB, for 2,000 groups over 500 offers.
 */
const KEPT_OFFER_PLACES = 1_000_000;
/** Groups kept whatever the catalogue's size. */
const MIN_KEPT_GROUPS = 64;

const keptByCatalogue = new WeakMap<readonly CatalogueOffer[], Map<string, KeptHistory>>();

/** The group's kept history under this catalogue, if any (and marks it as the latest used). */
export function keptHistoryOf(held: readonly CatalogueOffer[], chgId: string): KeptHistory | undefined {
  const kept = keptByCatalogue.get(held);
  const entry = kept?.get(chgId);
  if (entry) {
    // A Map iterates in insertion order: moved to the end, the group is the last to be dropped.
    kept!.delete(chgId);
    kept!.set(chgId, entry);
  }
  return entry;
}

/** Keeps the group's history, read with this stamp, dropping the least recently used beyond the bound. */
export function keepHistory(
  held: readonly CatalogueOffer[],
  chgId: string,
  stamp: string,
  history: readonly MerchantHistory[],
): KeptHistory {
  let kept = keptByCatalogue.get(held);
  if (!kept) keptByCatalogue.set(held, (kept = new Map()));
  const entry: KeptHistory = { stamp, history };
  kept.delete(chgId);
  kept.set(chgId, entry);
  const bound = Math.max(MIN_KEPT_GROUPS, Math.floor(KEPT_OFFER_PLACES / Math.max(1, held.length)));
  for (const oldest of kept.keys()) {
    if (kept.size <= bound) break;
    kept.delete(oldest);
  }
  return entry;
}

/** The group's relevance order at `now` from its kept history: the kept order while it holds. */
export function keptRanking(
  entry: KeptHistory,
  held: readonly CatalogueOffer[],
  now: Date,
  issuerDelayDays: number,
): RankedOffers {
  const at = now.getTime();
  const order = entry.order;
  if (order && order.issuerDelayDays === issuerDelayDays && order.fromMs <= at && at < order.untilMs)
    return order.ranked;
  const ranked = rankedOffers(held, entry.history, now, issuerDelayDays);
  entry.order = { issuerDelayDays, ...habitsSpanOf(entry.history, now), ranked };
  return ranked;
}
