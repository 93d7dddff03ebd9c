// A group's offer page as sent, kept in the API process for the same request's next read
// (decision 0065). A page is a function of what the list's statement reads of the group (its
// activations, its progress, its purchase history's stamp, its enrolments in the targeted offers
// of the page's reach), of the held catalogue, of the request (the group, the issuer's branded
// delay, sort, filters, limit, cursor) and of its instant only through the offers' statuses and
// the group's habits, which hold over a span of instants. The next read of the same request runs
// the statement the page would have run anyway and sends the kept bytes when everything it read
// is what the page was made from and the instant is within the span; anything else, and the page
// is made again. So a kept page is never stale: it is what making it again would give.
//
// Enrolments are facts (known-enrolments.ts): an arm read before never changes, so only the
// targeted offers of the reach that had no arm when the page was made are asked for again.
import type { CatalogueOffer } from './issuer-catalogue';

export interface KeptPage {
  issuerId: string;
  /** The held catalogue the page was made from (its array: a new version is a new array). */
  held: readonly CatalogueOffer[];
  /** That catalogue's version, as the statement reads it. */
  version: string;
  /** What the statement read of the group, as keptPageState puts it together. */
  state: string;
  /** Under sort=relevance, the group's history stamp the page was ranked by. */
  historyStamp?: string;
  /** The targeted offers of the page's reach the group had no enrolment in. */
  unenrolled: readonly string[];
  /** The instants over which the statuses and the order the page shows hold: [fromMs, untilMs). */
  fromMs: number;
  untilMs: number;
  body: Buffer;
}

/** Bytes of kept pages per process, whatever the issuers: about 500 first pages of 50 offers. */
const KEPT_PAGE_BYTES = 32 * 1024 * 1024;

/** By request key, least recently read first (a Map iterates in insertion order). */
const pages = new Map<string, KeptPage>();
let keptBytes = 0;
/** Each issuer's catalogue last kept for: pages of an older one are dropped, never left holding it. */
const latestHeld = new Map<string, readonly CatalogueOffer[]>();

/** The request's key: the group, and everything of the request the page depends on besides its instant. */
export function keptPageKey(parts: ReadonlyArray<string | number | undefined>): string {
  // As JSON: no part's text can run into the next, and an absent part is not an empty one.
  return JSON.stringify(parts);
}

/** What the statement read of the group that a page depends on, as one comparable text. */
export function keptPageState(view: { activated: string | null; progress: string | null }): string {
  return `${view.activated ?? ''}\u0000${view.progress ?? ''}`;
}

/** The page kept for the request, if it was made from this catalogue and `at` is within its span. */
export function keptPageOf(key: string, held: readonly CatalogueOffer[], at: Date): KeptPage | undefined {
  const page = pages.get(key);
  if (!page) return undefined;
  const ms = at.getTime();
  if (page.held !== held || ms < page.fromMs || ms >= page.untilMs) {
    forget(key);
    return undefined;
  }
  pages.delete(key);
  pages.set(key, page);
  return page;
}

/** Keeps the page, dropping the least recently read beyond the bound (never this one). */
export function keepPage(key: string, page: KeptPage): void {
  if (latestHeld.get(page.issuerId) !== page.held) {
    latestHeld.set(page.issuerId, page.held);
    for (const [k, p] of pages) if (p.issuerId === page.issuerId && p.held !== page.held) forget(k);
  }
  forget(key);
  pages.set(key, page);
  keptBytes += page.body.length;
  for (const oldest of pages.keys()) {
    if (keptBytes <= KEPT_PAGE_BYTES || oldest === key) break;
    forget(oldest);
  }
}

function forget(key: string): void {
  const page = pages.get(key);
  if (!page) return;
  pages.delete(key);
  keptBytes -= page.body.length;
}

/** Pages and bytes kept: for tests of the bound. */
export function keptPagesSize(): { pages: number; bytes: number } {
  return { pages: pages.size, bytes: keptBytes };
}
