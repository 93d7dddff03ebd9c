// A group's offer list (GET /api/v2/chg/{chgId}/offers and a merchant's offers under a group):
// one named statement reads what is the group's own (that it is the issuer's, its enrolments in
// targeted offers, its activations) and the catalogue's version; the offers come from the
// issuer's catalogue held in memory for that version (issuer-catalogue.ts, decision 0050), and
// the page is cut here. The filters are the presented offer's own rules, so a filter and the
// status or rate it shows cannot disagree: `status` as an issuer sees it (present.ts,
// issuerOfferStatus), `type` by the rate it pays (core/rules/branded-rate.ts).
import type { Db } from '../../prisma/client';
import { hotQuery, type HotStatement } from '../../prisma/hot';
import { effectiveBrandedRateBps } from '../../core/rules/branded-rate';
import { issuerOfferStatus } from './present';
import { byStartThenId, type CatalogueOffer, type IssuerCatalogue } from './issuer-catalogue';

export interface GroupOfferQuery {
  issuerId: string;
  chgId: string;
  /** The issuer's clock. */
  now: Date;
  merchantId?: string;
  status?: 'scheduled' | 'active' | 'ended';
  type?: 'cashback' | 'branded';
  issuerDelayDays: number;
  after?: { startsAt: Date; id: string };
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
}

// $1 issuer, $2 group. One row, or none when the group is not the issuer's. The ids come as one
// comma-separated string each (an offer or merchant id has no comma): cheaper to read than an
// array of hundreds.
export const GROUP_OFFER_VIEW: HotStatement = {
  name: 'group_offer_view_v1',
  text: `
    SELECT cv.version::text AS catalogue_version, en.treated, en.untreated, ac.merchants AS activated
      -- By its primary key alone (decision 0010): the issuer is checked on the one row found.
      FROM (SELECT g0.id, g0.issuer_id FROM cardholder_group g0 WHERE g0.id = $2 OFFSET 0) g
      CROSS JOIN LATERAL (
        SELECT string_agg(e.offer_id, ',') FILTER (WHERE e.arm = 'treated') AS treated,
               string_agg(e.offer_id, ',') FILTER (WHERE e.arm IS DISTINCT FROM 'treated') AS untreated
          FROM offer_enrolment e WHERE e.chg_id = g.id) en
      CROSS JOIN LATERAL (
        SELECT string_agg(a.merchant_id, ',') AS merchants
          FROM activation a WHERE a.chg_id = g.id AND a.status = 'active') ac
      CROSS JOIN catalogue_version cv
     WHERE g.issuer_id = $1 AND cv.id = 1`,
};

interface ViewRow {
  catalogue_version: string;
  treated: string | null;
  untreated: string | null;
  activated: string | null;
}

const idSet = (ids: string | null) => new Set(ids ? ids.split(',') : []);

export async function readGroupOfferPage(
  db: Db,
  catalogue: IssuerCatalogue,
  q: GroupOfferQuery,
): Promise<GroupOfferPage> {
  const [view] = await hotQuery<ViewRow>(db, GROUP_OFFER_VIEW, [q.issuerId, q.chgId]);
  if (!view) return { groupFound: false, enrolmentPending: false, offers: [] };
  const offers = await catalogue.offers(db, q.issuerId, BigInt(view.catalogue_version));
  const treated = idSet(view.treated);
  const untreated = idSet(view.untreated);
  const activated = idSet(view.activated);
  const page: ListedOffer[] = [];
  for (let i = q.after ? firstAfter(offers, q.after) : 0; i < offers.length && page.length < q.take; i++) {
    const o = offers[i];
    if (q.merchantId !== undefined && o.merchantId !== q.merchantId) continue;
    if (o.targeted && !treated.has(o.id)) {
      // Only an offer within the page's reach can change the page: one the group was never
      // evaluated for, while it is live, is enrolled first (the caller reads the page again).
      if (!untreated.has(o.id) && isLive(o, q.now)) return { groupFound: true, enrolmentPending: true, offers: [] };
      continue;
    }
    if (matches(o, q)) page.push({ offer: o, activated: activated.has(o.merchantId) });
  }
  return { groupFound: true, enrolmentPending: false, offers: page };
}

/** The index of the first offer after the cursor (the offers are in cursor order). */
function firstAfter(offers: CatalogueOffer[], after: { startsAt: Date; id: string }): number {
  let low = 0;
  let high = offers.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (byStartThenId(offers[mid], after) <= 0) low = mid + 1;
    else high = mid;
  }
  return low;
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
