// A listed offer as JSON, serialised once and reused while the issuer's catalogue entry lives
// (issuer-catalogue.ts, decision 0050). Fifty offers presented and stringified for every request
// were most of what remained of an offer list once the database was no longer read per offer. The
// text is presentIssuerOffer's own, so it says exactly what a fresh presentation would: it
// depends on the offer, which the catalogue version fixes, and on three things of the request,
// which key it: the issuer's branded delay, the status at the request's instant, and whether the
// group has activated the merchant.
import { issuerOfferStatus, presentIssuerOffer } from './present';
import type { CatalogueOffer } from './issuer-catalogue';

const texts = new WeakMap<CatalogueOffer, Map<string, string>>();

export function listedOfferJson(
  offer: CatalogueOffer,
  group: { issuerDelayDays: number; merchantActivated: boolean },
  now: Date,
): string {
  const key = `${group.issuerDelayDays}:${issuerOfferStatus(offer, now)}:${group.merchantActivated}`;
  let ofOffer = texts.get(offer);
  if (!ofOffer) texts.set(offer, (ofOffer = new Map()));
  let text = ofOffer.get(key);
  if (text === undefined) {
    text = JSON.stringify(presentIssuerOffer(offer, group, now));
    ofOffer.set(key, text);
  }
  return text;
}

/** A page of listed offers as API.md's list answer, from their texts. */
export function offerPageJson(texts: string[], nextCursor: string | null): string {
  return `{"data":[${texts.join(',')}],"nextCursor":${JSON.stringify(nextCursor)}}`;
}
