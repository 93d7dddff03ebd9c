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
