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

/**
 * A listed offer's text as its parts, in order: the kept text, or the group's own fields before it.
 * The parts are copied once, into the page: never joined per offer first.
 */
export type OfferText = Buffer | Buffer[];

/** The text with `{"name":value,` first: the group's own, so never kept. */
function withFieldFirst(text: OfferText, field: string): Buffer[] {
  const [first, ...rest] = Array.isArray(text) ? text : [text];
  // The field opens the object; the text goes on after its own opening brace.
  return [Buffer.from(`{${field},`), first.subarray(1), ...rest];
}

/** A listed offer's text with its relevance to the group first (sort=relevance). */
export function withRelevance(text: OfferText, relevance: number): Buffer[] {
  return withFieldFirst(text, `"relevance":${relevance}`);
}

/** A listed offer's text with the group's progress on it first (a cumulative offer). */
export function withProgress(text: OfferText, progress: Progress): Buffer[] {
  return withFieldFirst(text, `"progress":${JSON.stringify(progress)}`);
}

const PAGE_START = Buffer.from('{"data":[');
const COMMA = Buffer.from(',');

/** A page of listed offers as API.md's list answer, from their texts (UTF-8 already: copied, not encoded). */
export function offerPageJson(texts: OfferText[], nextCursor: string | null): Buffer {
  const parts: Buffer[] = [PAGE_START];
  texts.forEach((text, i) => {
    if (i > 0) parts.push(COMMA);
    if (Array.isArray(text)) parts.push(...text);
    else parts.push(text);
  });
  parts.push(Buffer.from(`],"nextCursor":${JSON.stringify(nextCursor)}}`));
  return Buffer.concat(parts);
}
