// The public status of an offer (API.md: scheduled | active | ended), derived from its
// window and its catalogue status at one instant. The window is half-open,
// [startsAt, endsAt), so an operator who sets endsAt to "now" ends the offer at once.
export type OfferStatus = 'scheduled' | 'active' | 'ended';
export type CatalogueStatus = 'active' | 'inactive';

export interface OfferWindow {
  startsAt: Date;
  endsAt: Date | null;
  catalogueStatus: CatalogueStatus;
}

export function offerStatusAt(offer: OfferWindow, at: Date): OfferStatus {
  // A deactivated offer is over for good, whatever its window says: issuers show it as ended.
  if (offer.catalogueStatus === 'inactive') return 'ended';
  if (offer.endsAt !== null && at.getTime() >= offer.endsAt.getTime()) return 'ended';
  if (at.getTime() < offer.startsAt.getTime()) return 'scheduled';
  return 'active';
}

/**
 * The instants around `at` over which every window's status stays what it is at `at`:
 * [fromMs, untilMs), bounded by the nearest window edges before and after it. A status
 * changes only at an edge (startsAt, endsAt), so anything decided from the statuses at `at`
 * holds over the whole span.
 */
export function statusSpanOf(
  windows: Iterable<Pick<OfferWindow, 'startsAt' | 'endsAt'>>,
  at: Date,
): { fromMs: number; untilMs: number } {
  const now = at.getTime();
  let fromMs = -Infinity;
  let untilMs = Infinity;
  const edge = (ms: number) => {
    if (ms <= now) fromMs = Math.max(fromMs, ms);
    else untilMs = Math.min(untilMs, ms);
  };
  for (const w of windows) {
    edge(w.startsAt.getTime());
    if (w.endsAt !== null) edge(w.endsAt.getTime());
  }
  return { fromMs, untilMs };
}
