// A listed offer as JSON (UTF-8 bytes), serialised once and reused while the issuer's catalogue entry lives
// (issuer-catalogue.ts, decision 0050). Fifty offers presented and stringified for every request
// were most of what remained of an offer list once the database was no longer read per offer. The
// text is presentIssuerOffer's own, so it says exactly what a fresh presentation would: it
// depends on the offer, which the catalogue version fixes, and on three things of the request,
// which key it: the issuer's branded delay, the status at the request's instant, and whether the
// group has activated the merchant.
import { issuerOfferStatus, presentIssuerOffer } from './present';
import type { CatalogueOffer } from './issuer-catalogue';
import type { Progress } from '../../core/rules/reward-kinds';

const texts = new WeakMap<CatalogueOffer, Map<string, Buffer>>();

export function listedOfferJson(
  offer: CatalogueOffer,
  group: { issuerDelayDays: number; merchantActivated: boolean },
  now: Date,
): Buffer {
  const key = `${group.issuerDelayDays}:${issuerOfferStatus(offer, now)}:${group.merchantActivated}`;
  let ofOffer = texts.get(offer);
  if (!ofOffer) texts.set(offer, (ofOffer = new Map()));
  let text = ofOffer.get(key);
  if (text === undefined) {
    text = Buffer.from(JSON.stringify(presentIssuerOffer(offer, group, now)));
    ofOffer.set(key, text);
  }
  return text;
}

/** A listed offer's text with its relevance to the group first (sort=relevance): the group's, so never kept. */
export function withRelevance(text: Buffer, relevance: number): Buffer {
  return Buffer.concat([Buffer.from(`{"relevance":${relevance},`), text.subarray(1)]);
}

/** A listed offer's text with the group's progress on it first (a cumulative offer): the group's, so never kept. */
export function withProgress(text: Buffer, progress: Progress): Buffer {
  return Buffer.concat([Buffer.from(`{"progress":${JSON.stringify(progress)},`), text.subarray(1)]);
}

const PAGE_START = Buffer.from('{"data":[');
const COMMA = Buffer.from(',');

/** A page of listed offers as API.md's list answer, from their texts (UTF-8 already: copied, not encoded). */
export function offerPageJson(texts: Buffer[], nextCursor: string | null): Buffer {
  const parts: Buffer[] = [PAGE_START];
  texts.forEach((text, i) => parts.push(...(i === 0 ? [text] : [COMMA, text])));
  parts.push(Buffer.from(`],"nextCursor":${JSON.stringify(nextCursor)}}`));
  return Buffer.concat(parts);
}
