// A group's purchase history and its relevance order, kept in the API process for the group's next
// ranked list (decision 0063). The history only grows: each settlement adds one purchase to one of
// the group's rows (activities/lifecycle/merchant-history.ts), so the sum of its purchases changes
// with every change and says exactly whether the history moved since it was kept. The list's
// statement reads that sum instead of the history itself (each row with its merchant's category,
// as JSON) and sends the history only when it moved; the order is then the kept one, not worked
// out again. A group read for the first time, or whose history moved, is read and ranked in full.
//
// Kept with the held catalogue it was ranked against (ranked-offers.ts): a new catalogue version
// (an offer or a merchant changed, a merchant's category too) is a new held array, and what was
// kept for the old one is of no use. Besides the history, an order depends on the issuer's delay
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
 * Offers' places in kept orders, per process whatever the issuers: each kept order holds one per
 * offer of its catalogue (about 24 bytes), so about 24 MB; 2,000 groups over 500 offers each.
 */
const KEPT_OFFER_PLACES = 1_000_000;

/** By group id, least recently read first (a Map iterates in insertion order), with the catalogue each was kept for. */
const keptByGroup = new Map<string, { issuerId: string; held: readonly CatalogueOffer[]; entry: KeptHistory }>();
let keptPlaces = 0;
/** Each issuer's catalogue last kept for: what was kept for an older one is dropped, never left holding it. */
const latestHeld = new Map<string, readonly CatalogueOffer[]>();

/** The group's kept history under this catalogue, if any (and marks it as the latest read). */
export function keptHistoryOf(held: readonly CatalogueOffer[], chgId: string): KeptHistory | undefined {
  const kept = keptByGroup.get(chgId);
  if (!kept) return undefined;
  forget(chgId);
  // Kept for another catalogue version: of no use, as it may rank offers that changed.
  if (kept.held !== held) return undefined;
  keptByGroup.set(chgId, kept);
  keptPlaces += held.length;
  return kept.entry;
}

/** Keeps the group's history, read with this stamp, dropping the least recently read beyond the bound. */
export function keepHistory(
  held: readonly CatalogueOffer[],
  issuerId: string,
  chgId: string,
  stamp: string,
  history: readonly MerchantHistory[],
): KeptHistory {
  if (latestHeld.get(issuerId) !== held) {
    latestHeld.set(issuerId, held);
    for (const [id, kept] of keptByGroup) if (kept.issuerId === issuerId && kept.held !== held) forget(id);
  }
  const entry: KeptHistory = { stamp, history };
  forget(chgId);
  keptByGroup.set(chgId, { issuerId, held, entry });
  keptPlaces += held.length;
  for (const oldest of keptByGroup.keys()) {
    if (keptPlaces <= KEPT_OFFER_PLACES || oldest === chgId) break;
    forget(oldest);
  }
  return entry;
}

function forget(chgId: string): void {
  const kept = keptByGroup.get(chgId);
  if (!kept) return;
  keptByGroup.delete(chgId);
  keptPlaces -= kept.held.length;
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
