// A group's offer list (GET /api/v2/chg/{chgId}/offers and a merchant's offers under a group):
// one named statement reads what is the group's own (that it is the issuer's, its enrolments in
// the targeted offers within the page's reach, its activations) and the catalogue's version; the
// offers come from the issuer's catalogue held in memory for that version (issuer-catalogue.ts,
// decision 0050), and the page is cut here (a page by relevance may need a second statement:
// readRankedPage). The filters are the presented offer's own rules, so a filter and the
// status or rate it shows cannot disagree: `status` as an issuer sees it (present.ts,
// issuerOfferStatus), `type` by the rate it pays (core/rules/branded-rate.ts).
import type { Db } from '../../prisma/client';
import { hotQuery, type HotStatement } from '../../prisma/hot';
import { effectiveBrandedRateBps } from '../../core/rules/branded-rate';
import { issuerOfferStatus } from './present';
import { TARGETED, type CatalogueOffer, type IssuerCatalogue } from './issuer-catalogue';
import { firstAfter, orderedOffers, type OfferPosition, type OfferSort, type OrderedOffers } from './offer-order';
import { rankedOffers, unrankedOffers, type RelevanceLookup } from './ranked-offers';
import { keepHistory, keptHistoryOf, keptRanking, NOTHING_KEPT } from './kept-rankings';
import { knownArmsOf, rememberArms } from './known-enrolments';
import { keptPageState, type KeptPage } from './kept-pages';
import type { MerchantHistory } from '../../core/rules/relevance';
import { statusSpanOf } from '../../core/rules/offer-status';

export interface GroupOfferQuery {
  issuerId: string;
  chgId: string;
  /** The issuer's clock. */
  now: Date;
  merchantId?: string;
  status?: 'scheduled' | 'active' | 'ended';
  type?: 'cashback' | 'branded';
  issuerDelayDays: number;
  sort: OfferSort;
  /** The cursor: where the last page ended in the order. */
  after?: OfferPosition;
  /** Rows to read: the page's limit and one more, which says whether a next page exists. */
  take: number;
}

/** An offer of the page (the catalogue's own object: its JSON is kept with it) and the group's activation. */
export interface ListedOffer {
  offer: CatalogueOffer;
  activated: boolean;
}

export interface GroupOfferPage {
  groupFound: boolean;
  /** A live targeted offer within the page's reach has no enrolment of the group yet: enrol, then read again. */
  enrolmentPending: boolean;
  offers: ListedOffer[];
  /** Under sort=relevance: each offer's relevance to the group, by offer id. */
  relevance?: RelevanceLookup;
  /** The group's measure on each cumulative offer it has progress on, by offer id. */
  measures: Map<string, number>;
  /** What the page was made from, for keeping it (kept-pages.ts); absent when it must not be kept. */
  madeFrom?: Omit<KeptPage, 'body'>;
}

// The group's progress on cumulative offers, as `<offer id> <measure>` joined by commas: an
// index-only read of offer_progress_chg_idx, nothing for a group without any.
const PROGRESS_COLUMN = `(SELECT string_agg(p.offer_id || ' ' || p.measure, ',')
              FROM offer_progress p WHERE p.chg_id = g.id) AS progress`;

// The group's enrolments among the offers named by the given parameter, as `<offer id> <arm or ->`
// joined by commas (an id has neither): the few the page's reach has not read before
// (known-enrolments.ts), however many offers the group is enrolled in.
const enrolledAmong = (offers: string) => `(SELECT string_agg(e.offer_id || ' ' || coalesce(e.arm, '-'), ',')
              FROM offer_enrolment e WHERE e.chg_id = g.id AND e.offer_id = ANY (${offers}::text[])) AS enrolled`;

// $1 issuer, $2 group, then what `enrolled` names. One row, or none when the group is not the
// issuer's. A statement either reads enrolments or does not (GROUP_OWN_VIEW): an empty array to a
// statement that reads them would let PostgreSQL prefer planning it again on every call.
const offerView = (name: string, enrolled: string): HotStatement => ({
  name,
  text: `
    SELECT cv.version::text AS catalogue_version,
           ${enrolled},
           (SELECT string_agg(a.merchant_id, ',')
              FROM activation a WHERE a.chg_id = g.id AND a.status = 'active') AS activated,
           ${PROGRESS_COLUMN}
      -- By its primary key alone (decision 0010): the issuer is checked on the one row found.
      FROM (SELECT g0.id, g0.issuer_id FROM cardholder_group g0 WHERE g0.id = $2 OFFSET 0) g
      CROSS JOIN catalogue_version cv
     WHERE g.issuer_id = $1 AND cv.id = 1`,
});

/** The plain list's view, with the group's enrolments in $3, the targeted offers of the page's reach not read before. */
export const GROUP_OFFER_VIEW = offerView('group_offer_view_v3', enrolledAmong('$3'));
/** The same when every targeted offer of the reach has its enrolment read before (or there is none). */
export const GROUP_OWN_VIEW = offerView('group_own_view_v1', 'NULL::text AS enrolled');

interface ViewRow {
  catalogue_version: string;
  enrolled: string | null;
  activated: string | null;
  progress: string | null;
}

// The ranked list's view: as the plain one's, with the stamp of the group's purchase history (the
// sum of its purchases: it grows with every change, kept-rankings.ts) and, only when that differs
// from the stamp sent (the one this process keeps, NOTHING_KEPT if none), the history by merchant,
// each as [merchant id, category, purchases, spend, latest in ms].
const rankedView = (name: string, enrolled: string, stamp: string): HotStatement => ({
  name,
  text: `
    SELECT cv.version::text AS catalogue_version,
           ${enrolled},
           (SELECT string_agg(a.merchant_id, ',')
              FROM activation a WHERE a.chg_id = g.id AND a.status = 'active') AS activated,
           ${PROGRESS_COLUMN},
           hs.purchases::text AS history_stamp,
           -- Each merchant's category by its key: a few rows, never a scan of the merchants.
           CASE WHEN hs.purchases <> ${stamp}::bigint THEN
             (SELECT json_agg(json_build_array(h.merchant_id,
                                               (SELECT m.category FROM merchant m WHERE m.id = h.merchant_id),
                                               h.purchases, h.spend_minor,
                                               (extract(epoch FROM h.last_purchase_at) * 1000)::bigint))
                FROM chg_merchant_history h WHERE h.chg_id = g.id)
           END AS history
      FROM (SELECT g0.id, g0.issuer_id FROM cardholder_group g0 WHERE g0.id = $2 OFFSET 0) g
      CROSS JOIN catalogue_version cv
      CROSS JOIN LATERAL (SELECT coalesce(sum(h.purchases), 0) AS purchases
                            FROM chg_merchant_history h WHERE h.chg_id = g.id) hs
     WHERE g.issuer_id = $1 AND cv.id = 1`,
});

// Nothing kept ($1 issuer, $2 group, $3 the targeted offers a group without history would reach
// not read before, $4 NOTHING_KEPT): the order, and so the page's reach, is known only once the
// history is read, so the enrolments read are a guess: those $3 names and those in every targeted
// offer of a merchant the group has bought at (its history lifts them most). Offers a page reaches
// beyond what was read are read after (GROUP_ENROLMENTS). Reading every enrolment of the group
// instead (500 for 500 targeted offers) cost the list more than all the rest of the statement.
export const GROUP_RANKED_VIEW = rankedView(
  'group_ranked_view_v4',
  `(SELECT string_agg(e.offer_id || ' ' || coalesce(e.arm, '-'), ',')
              FROM offer_enrolment e
             WHERE e.chg_id = g.id
               -- One probe of the group's index per offer: the offers named, then (nothing kept) the
               -- targeted ones of its merchants (only a targeted offer has enrolments).
               AND e.offer_id = ANY ($3::text[] || ARRAY(
                     SELECT o.id FROM chg_merchant_history h
                     -- Each merchant's offers by its index, never all the offers: a join the planner
                     -- may not reorder (OFFSET 0).
                     CROSS JOIN LATERAL (SELECT o.id FROM offer o
                                          WHERE o.merchant_id = h.merchant_id AND ${TARGETED} OFFSET 0) o
                      WHERE h.chg_id = g.id AND $4::bigint < 0))) AS enrolled`,
  '$4',
);

/** A history kept ($4 its stamp): the enrolments of $3, the kept order's reach not read before (exact unless the history moved). */
export const GROUP_RANKED_KEPT_VIEW = rankedView('group_ranked_kept_view_v1', enrolledAmong('$3'), '$4');

/** A history kept ($3 its stamp) and every enrolment of its order's reach read before. */
export const GROUP_RANKED_OWN_VIEW = rankedView('group_ranked_own_view_v1', 'NULL::text AS enrolled', '$3');

// The group's enrolments in the given offers ($1 group, $2 offers), as GROUP_OFFER_VIEW's column:
// the targeted offers a ranked page reaches beyond the guess its view read. The view has checked
// that the group is the issuer's.
export const GROUP_ENROLMENTS: HotStatement = {
  name: 'group_enrolments_v1',
  text: `
    SELECT string_agg(e.offer_id || ' ' || coalesce(e.arm, '-'), ',') AS enrolled
      FROM offer_enrolment e WHERE e.chg_id = $1 AND e.offer_id = ANY ($2::text[])`,
};

interface RankedViewRow extends ViewRow {
  history_stamp: string;
  /** Null when the stamp is the one sent (or the group has no history). */
  history: Array<[string, string, number, number, number]> | null;
}

/** Offers past the page's own the first window takes, for the targeted ones the group is not shown. */
const WINDOW_SLACK = 16;

export async function readGroupOfferPage(
  db: Db,
  catalogue: IssuerCatalogue,
  q: GroupOfferQuery,
): Promise<GroupOfferPage> {
  // The held catalogue says which enrolments the page needs; the statement says whether it is
  // still the committed one. Rarely not: then again, with the catalogue read afresh.
  const sort = q.sort;
  if (sort === 'relevance') return readRankedPage(db, catalogue, q);
  let held = catalogue.held(q.issuerId) ?? (await catalogue.atLeast(db, q.issuerId, 0n));
  let size = q.take + WINDOW_SLACK;
  for (;;) {
    const ordered = orderedOffers(held.offers, sort, q.issuerDelayDays);
    const reach = windowOf(ordered, q, size);
    const [view] = await hotQuery<ViewRow>(db, ...plainViewCall(q, unreadIds(q.chgId, reach.targeted)));
    if (!view) return notFound();
    const version = BigInt(view.catalogue_version);
    if (held.version < version) {
      held = await catalogue.atLeast(db, q.issuerId, version);
      continue;
    }
    const arms = rememberArms(q.chgId, armsOf(view.enrolled));
    const page = pageOf(ordered, q, reach.end, arms, new Set(splitIds(view.activated)));
    page.measures = measuresOf(view.progress);
    // A page the window left short, with offers beyond it: a wider window.
    if (page.enrolmentPending || page.offers.length === q.take || reach.end === ordered.offers.length)
      return { ...page, madeFrom: madeFrom(held, view, q, page, reach.targeted, arms) };
    size *= 4;
  }
}

/**
 * The page by relevance: ordered by the group's history, read with the enrolments of the page's
 * expected reach (that of the order from the history this process keeps, else of a group without
 * history, with the targeted offers of the history's merchants); any it reaches beyond those are
 * read next.
 */
async function readRankedPage(db: Db, catalogue: IssuerCatalogue, q: GroupOfferQuery): Promise<GroupOfferPage> {
  let held = catalogue.held(q.issuerId) ?? (await catalogue.atLeast(db, q.issuerId, 0n));
  let size = q.take + WINDOW_SLACK;
  for (;;) {
    const kept = keptHistoryOf(held.offers, q.chgId);
    const expected = kept
      ? keptRanking(kept, held.offers, q.now, q.issuerDelayDays)
      : unrankedOffers(held.offers, q.issuerDelayDays);
    // A cursor stands in the group's own order, which the order without history cannot place.
    const guess = q.after && !kept ? [] : unreadIds(q.chgId, windowOf(expected, q, size).targeted);
    const stamp = kept?.stamp ?? NOTHING_KEPT;
    const [view] = await hotQuery<RankedViewRow>(db, ...rankedViewCall(q, kept !== undefined, guess, stamp));
    if (!view) return notFound();
    const version = BigInt(view.catalogue_version);
    if (held.version < version) {
      held = await catalogue.atLeast(db, q.issuerId, version);
      continue;
    }
    let ranked = expected;
    // The history the order comes from, when kept: the span the order holds over is kept with it.
    let rankedBy = kept;
    // The enrolments read: the guess's, and (nothing kept) those at the history's merchants.
    let readAt = new Set<string>();
    if (view.history_stamp !== stamp) {
      const history = historyOf(view);
      if (!kept) readAt = new Set(history.map((h) => h.merchantId));
      // Kept only when read at the held version itself: its merchants' categories are that version's.
      rankedBy =
        held.version === version
          ? keepHistory(held.offers, q.issuerId, q.chgId, view.history_stamp, history)
          : undefined;
      ranked = rankedBy
        ? keptRanking(rankedBy, held.offers, q.now, q.issuerDelayDays)
        : rankedOffers(held.offers, history, q.now, q.issuerDelayDays);
    }
    const reach = windowOf(ranked, q, size);
    let arms = rememberArms(q.chgId, armsOf(view.enrolled));
    const guessed = new Set(guess);
    const beyond = reach.targeted.filter((o) => !guessed.has(o.id) && !readAt.has(o.merchantId) && !arms.has(o.id));
    if (beyond.length > 0) {
      const [more] = await hotQuery<{ enrolled: string | null }>(db, GROUP_ENROLMENTS, [q.chgId, idsOf(beyond)]);
      arms = rememberArms(q.chgId, armsOf(more.enrolled));
    }
    const page = pageOf(ranked, q, reach.end, arms, new Set(splitIds(view.activated)));
    if (page.enrolmentPending || page.offers.length === q.take || reach.end === ranked.offers.length) {
      const order = rankedBy?.order;
      const made = order && madeFrom(held, view, q, page, reach.targeted, arms);
      return {
        ...page,
        relevance: ranked.relevance,
        measures: measuresOf(view.progress),
        madeFrom: made && {
          ...made,
          historyStamp: view.history_stamp,
          fromMs: Math.max(made.fromMs, order.fromMs),
          untilMs: Math.min(made.untilMs, order.untilMs),
        },
      };
    }
    size *= 4;
  }
}

/** The plain view to run and its parameters: with the enrolments still unread, if any. */
function plainViewCall(q: GroupOfferQuery, unread: string[]): [HotStatement, unknown[]] {
  if (unread.length > 0) return [GROUP_OFFER_VIEW, [q.issuerId, q.chgId, unread]];
  return [GROUP_OWN_VIEW, [q.issuerId, q.chgId]];
}

/** The ranked view to run and its parameters: the guess's when nothing is kept, else by what is still unread. */
function rankedViewCall(q: GroupOfferQuery, kept: boolean, unread: string[], stamp: string): [HotStatement, unknown[]] {
  if (!kept) return [GROUP_RANKED_VIEW, [q.issuerId, q.chgId, unread, stamp]];
  if (unread.length > 0) return [GROUP_RANKED_KEPT_VIEW, [q.issuerId, q.chgId, unread, stamp]];
  return [GROUP_RANKED_OWN_VIEW, [q.issuerId, q.chgId, stamp]];
}

function historyOf(view: RankedViewRow): MerchantHistory[] {
  return (view.history ?? []).map(([merchantId, category, purchases, spend, lastMs]) => ({
    merchantId,
    category,
    purchases,
    spendMinor: Number(spend),
    lastPurchaseAt: new Date(Number(lastMs)),
  }));
}

/**
 * What a page was made from, to keep it by: none for a page that sends the caller to enrol (it
 * is read again) or one read against a catalogue other than the held one.
 */
function madeFrom(
  held: { version: bigint; offers: readonly CatalogueOffer[] },
  view: ViewRow,
  q: GroupOfferQuery,
  page: GroupOfferPage,
  reach: readonly CatalogueOffer[],
  arms: ReadonlyMap<string, string>,
): Omit<KeptPage, 'body'> | undefined {
  if (page.enrolmentPending || held.version !== BigInt(view.catalogue_version)) return undefined;
  return {
    issuerId: q.issuerId,
    held: held.offers,
    version: view.catalogue_version,
    state: keptPageState(view),
    unenrolled: reach.filter((o) => !arms.has(o.id)).map((o) => o.id),
    ...statusSpanOf(held.offers, q.now),
  };
}

/**
 * Whether the page kept for the request is still the page: the statement making it would run,
 * compared with what it was made from ('moved': make it again).
 */
export async function keptPageHolds(
  db: Db,
  q: GroupOfferQuery,
  page: KeptPage,
): Promise<'holds' | 'moved' | 'notFound'> {
  // An offer the page's group had no enrolment in, enrolled since and read by another list.
  const known = knownArmsOf(q.chgId);
  if (known && page.unenrolled.some((id) => known.has(id))) return 'moved';
  const unread = [...page.unenrolled];
  const [view] = await hotQuery<RankedViewRow>(
    db,
    ...(page.historyStamp === undefined
      ? plainViewCall(q, unread)
      : rankedViewCall(q, true, unread, page.historyStamp)),
  );
  if (!view) return 'notFound';
  const same =
    view.catalogue_version === page.version &&
    view.enrolled === null &&
    keptPageState(view) === page.state &&
    (page.historyStamp === undefined || view.history_stamp === page.historyStamp);
  return same ? 'holds' : 'moved';
}

const notFound = (): GroupOfferPage => ({
  groupFound: false,
  enrolmentPending: false,
  offers: [],
  measures: new Map(),
});

const splitIds = (ids: string | null) => (ids ? ids.split(',') : []);

/** The ids of the targeted offers whose enrolment of the group this process has not read yet. */
function unreadIds(chgId: string, targeted: readonly CatalogueOffer[]): string[] {
  const known = knownArmsOf(chgId);
  return targeted.filter((o) => !known?.has(o.id)).map((o) => o.id);
}
const idsOf = (offers: readonly CatalogueOffer[]) => offers.map((o) => o.id);

/** Offer id -> the group's measure on it. */
function measuresOf(progress: string | null): Map<string, number> {
  const measures = new Map<string, number>();
  for (const pair of splitIds(progress)) {
    const space = pair.indexOf(' ');
    measures.set(pair.slice(0, space), Number(pair.slice(space + 1)));
  }
  return measures;
}

/** Offer id -> arm ('-' for a group stored outside the audience). */
function armsOf(enrolled: string | null): Map<string, string> {
  const arms = new Map<string, string>();
  for (const pair of splitIds(enrolled)) {
    const space = pair.indexOf(' ');
    arms.set(pair.slice(0, space), pair.slice(space + 1));
  }
  return arms;
}

const ofMerchant = (o: CatalogueOffer, q: GroupOfferQuery) =>
  q.merchantId === undefined || o.merchantId === q.merchantId;

/**
 * From the cursor, the offers up to the `size`-th that the filters let through (`end`, an index
 * past the last), and the targeted ones among them and before them whose enrolment decides
 * whether the page shows them.
 */
function windowOf(
  ordered: OrderedOffers,
  q: GroupOfferQuery,
  size: number,
): { targeted: CatalogueOffer[]; end: number } {
  const { offers } = ordered;
  const targeted: CatalogueOffer[] = [];
  let passed = 0;
  let i = q.after ? firstAfter(ordered, q.after) : 0;
  for (; i < offers.length && passed < size; i++) {
    const o = offers[i];
    if (!ofMerchant(o, q)) continue;
    if (o.targeted) targeted.push(o);
    if (matches(o, q)) passed++;
  }
  return { targeted, end: i };
}

function pageOf(
  ordered: OrderedOffers,
  q: GroupOfferQuery,
  end: number,
  arms: ReadonlyMap<string, string>,
  activated: Set<string>,
): GroupOfferPage {
  const page: ListedOffer[] = [];
  for (let i = q.after ? firstAfter(ordered, q.after) : 0; i < end && page.length < q.take; i++) {
    const o = ordered.offers[i];
    if (!ofMerchant(o, q)) continue;
    if (o.targeted && arms.get(o.id) !== 'treated') {
      // Only an offer within the page's reach can change the page: one the group was never
      // evaluated for, while it is live, is enrolled first (the caller reads the page again).
      if (!arms.has(o.id) && isLive(o, q.now))
        return { groupFound: true, enrolmentPending: true, offers: [], measures: new Map() };
      continue;
    }
    if (matches(o, q)) page.push({ offer: o, activated: activated.has(o.merchantId) });
  }
  return { groupFound: true, enrolmentPending: false, offers: page, measures: new Map() };
}

/** Live as a purchase sees the catalogue: the offer's own status and window (not its merchant's). */
function isLive(o: CatalogueOffer, now: Date): boolean {
  const at = now.getTime();
  return o.status === 'active' && o.startsAt.getTime() <= at && (o.endsAt === null || o.endsAt.getTime() > at);
}

function matches(o: CatalogueOffer, q: GroupOfferQuery): boolean {
  if (q.status !== undefined && issuerOfferStatus(o, q.now) !== q.status) return false;
  if (q.type === 'cashback') return o.cashbackRateBps > 0;
  if (q.type === 'branded') return effectiveBrandedRateBps(o.brandedRateBps, o.merchant, q.issuerDelayDays) > 0;
  return true;
}
