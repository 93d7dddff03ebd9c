// Issuer reads of the catalogue under a group (SPEC.md 4.2): merchants and offers.
// Every route first checks the group belongs to the caller; merchants hidden from the
// issuer answer 404 exactly like missing ones.
import { fromBody, fromPath, linksTo } from '../links';
import { defineRoute, type RouteSpec } from '../route';
import { issuerOf, type AuthenticatedIssuer } from '../middleware/auth';
import { cursorDate, decodeCursor, pageSchema, paginationQueryProperties, toPage } from '../pagination';
import type { AppDeps } from '../deps';
import { errors } from '../../core/errors';
import type { Prisma } from '../../prisma/generated/client';
import { idSchema } from '../schemas/common';
import { merchantSchema, offerSchema } from './schemas';
import {
  groupProgressOf,
  presentIssuerOffer,
  presentMerchant,
  type OfferMerchant,
  type PresentedOffer,
} from './present';
import { fromDbMinor } from '../../core/ledger';
import { groupNotFound, requireGroup, requireVisibleMerchant, visibleTo } from './scope';
import { enrolBeforeShowing, requireShownOffer } from './targeting';
import { keptPageHolds, readGroupOfferPage, type GroupOfferQuery, type ListedOffer } from './group-offers';
import { keepPage, keptPageKey, keptPageOf } from './kept-pages';
import { offerListPages } from '../../core/metrics';
import { IssuerCatalogue } from './issuer-catalogue';
import { OFFER_SORTS, sortKeyOf, type OfferPosition, type OfferSort } from './offer-order';
import { listedOfferJson, offerPageJson, withProgress, withRelevance } from './listed-offer-json';
import type { Validated } from '../../core/validated';
import { issuerNow, shiftedNow } from '../sandbox/issuer-clock';

const offerFilterProperties = {
  status: { type: 'string', enum: ['scheduled', 'active', 'ended'] },
  type: {
    type: 'string',
    enum: ['cashback', 'branded'],
    description: 'Offers with a cashback (or branded) rate above 0.',
  },
  sort: {
    type: 'string',
    enum: OFFER_SORTS,
    default: 'starts_at',
    description:
      'The order: starts_at (the default: earliest start first), ends_at (earliest end first, open-ended offers last), ' +
      'reward (the highest cashback and branded rates together first, as your groups are paid them), ties by id; ' +
      "or relevance (the highest relevance to the group first, each offer's relevance in the answer: the reward on the " +
      "group's typical purchase at the merchant, weighted by how often and how recently it bought there and in the " +
      "merchant's category), ties by startsAt, then id. A cursor continues the order it was issued in.",
  },
} as const;

const offerListQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: { ...paginationQueryProperties, merchantId: idSchema('mp'), ...offerFilterProperties },
} as const;
type OfferListQuery = Validated<typeof offerListQuerySchema>;

const tag = 'Merchants and offers';
const offerPage = {
  description:
    'A page of offers, in the order sort asks (by startsAt, then id, by default); under sort=relevance each carries its relevance.',
  schema: pageSchema(offerSchema),
};

// The first merchant or offer of a page leads to its own routes under the same group.
const MERCHANT_LINKS = linksTo(
  [
    'getMerchant',
    'listMerchantOffers',
    'getActivation',
    'activateMerchant',
    'deactivateMerchant',
    'getEarnEligibility',
    'getSpendEligibility',
    'getMerchantBalance',
  ],
  { chgId: fromPath('chgId'), merchantId: fromBody('/data/0/id') },
);
const OFFER_LINKS = {
  ...linksTo(['getOffer'], { chgId: fromPath('chgId'), offerId: fromBody('/data/0/id') }),
  ...linksTo(['getMerchantOffer'], {
    chgId: fromPath('chgId'),
    merchantId: fromBody('/data/0/merchantId'),
    offerId: fromBody('/data/0/id'),
  }),
};

/** The page as JSON bytes: each offer's presentation is serialised once (listed-offer-json.ts). */
async function listOffers(
  { db, clock }: AppDeps,
  catalogue: IssuerCatalogue,
  issuer: AuthenticatedIssuer,
  chgId: string,
  query: OfferListQuery,
): Promise<Buffer> {
  const now = shiftedNow(clock, issuer.clockOffsetMs);
  const q: GroupOfferQuery = {
    issuerId: issuer.id,
    chgId,
    now,
    merchantId: query.merchantId,
    status: query.status,
    type: query.type,
    issuerDelayDays: issuer.brandedAvailabilityDelayDays,
    sort: query.sort,
    after: cursorPosition(query.cursor, query.sort),
    take: query.limit + 1,
  };
  // The same request read again: the page sent last time while what it was made from holds.
  const key = keptPageKey([
    chgId,
    q.issuerDelayDays,
    query.sort,
    query.limit,
    query.cursor,
    query.merchantId,
    query.status,
    query.type,
  ]);
  const held = catalogue.held(issuer.id);
  const kept = held && keptPageOf(key, held.offers, now);
  if (kept) {
    const holds = await keptPageHolds(db, q, kept);
    if (holds === 'notFound') throw groupNotFound(chgId);
    if (holds === 'holds') {
      KEPT_PAGES_SENT.inc();
      return kept.body;
    }
  }
  let page = await readGroupOfferPage(db, catalogue, q);
  if (!page.groupFound) throw groupNotFound(chgId);
  // Rare: a live targeted offer the group was never evaluated for. Enrolled first, so that what
  // the list shows and what a purchase earns never disagree.
  if (page.enrolmentPending) {
    await enrolBeforeShowing(db, issuer.id, chgId, now, query.merchantId);
    page = await readGroupOfferPage(db, catalogue, q);
  }
  const relevance = page.relevance;
  const { data, nextCursor } = toPage(page.offers, query.limit, ({ offer }) =>
    query.sort === 'starts_at'
      ? [offer.startsAt.toISOString(), offer.id]
      : query.sort === 'relevance'
        ? [query.sort, -relevance!.get(offer.id)!, offer.startsAt.getTime(), offer.id]
        : [query.sort, sortKeyOf(offer, query.sort, issuer.brandedAvailabilityDelayDays), offer.id],
  );
  const group = (o: ListedOffer) => ({
    issuerDelayDays: issuer.brandedAvailabilityDelayDays,
    merchantActivated: o.activated,
  });
  const body = offerPageJson(
    data.map((o) => {
      const json = listedOfferJson(o.offer, group(o), now);
      const progress = groupProgressOf(o.offer, page.measures.get(o.offer.id));
      const shown = progress ? withProgress(json, progress) : json;
      return relevance ? withRelevance(shown, relevance.get(o.offer.id)!) : shown;
    }),
    nextCursor,
  );
  if (page.madeFrom) keepPage(key, { ...page.madeFrom, body });
  MADE_PAGES_SENT.inc();
  return body;
}
const KEPT_PAGES_SENT = offerListPages.labels('kept');
const MADE_PAGES_SENT = offerListPages.labels('made');

/**
 * Where the cursor says the last page ended. The default order's cursor is (startsAt, id), as it
 * always was; another order's names the order, so a cursor read under another is refused.
 */
function cursorPosition(cursor: string | undefined, sort: OfferSort): OfferPosition | undefined {
  if (sort === 'starts_at') {
    const after = decodeCursor(cursor, 2);
    return after && { key: cursorDate(after[0]).getTime(), id: String(after[1]) };
  }
  const ranked = sort === 'relevance';
  const after = decodeCursor(cursor, ranked ? 4 : 3);
  if (after === undefined) return undefined;
  const [name, key, ...rest] = after;
  const [tie, id] = ranked ? rest : [undefined, rest[0]];
  if (name !== sort || typeof key !== 'number' || (ranked && typeof tie !== 'number') || typeof id !== 'string')
    throw errors.validation('invalid_query', 'The cursor is not one this service issued.', [
      { path: '/cursor', message: 'is invalid' },
    ]);
  return { key, tie: tie as number | undefined, id };
}

/** One offer as the group sees it, with whether the group has activated its merchant. */
async function presentShownOffer(
  db: AppDeps['db'],
  issuer: AuthenticatedIssuer,
  chgId: string,
  offer: PresentedOffer & { merchant: OfferMerchant },
  now: Date,
) {
  const activation = await db.activation.findUnique({
    where: { chgId_merchantId: { chgId, merchantId: offer.merchantId } },
    select: { status: true },
  });
  const group = {
    issuerDelayDays: issuer.brandedAvailabilityDelayDays,
    merchantActivated: activation?.status === 'active',
  };
  const presented = presentIssuerOffer(offer, group, now);
  if (!groupProgressOf(offer, 0)) return presented;
  const stored = await db.offerProgress.findUnique({
    where: { offerId_chgId: { offerId: offer.id, chgId } },
    select: { measure: true },
  });
  return { progress: groupProgressOf(offer, stored ? fromDbMinor(stored.measure) : 0), ...presented };
}

export function catalogueRoutes(deps: AppDeps): RouteSpec[] {
  // Each app's own: a process's requests share it.
  const catalogue = new IssuerCatalogue();
  return [
    listMerchantsRoute(deps),
    getMerchantRoute(deps),
    listOffersRoute(deps, catalogue),
    getOfferRoute(deps),
    listMerchantOffersRoute(deps, catalogue),
    getMerchantOfferRoute(deps),
  ];
}

function listMerchantsRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/api/v2/chg/{chgId}/merchants',
    operationId: 'listMerchants',
    summary: 'List merchants for a group, by name then id',
    description:
      'Filters: category (exact), activated (true: active activation for this group), q (name contains, case-insensitive), status (default: active merchants only).',
    tag,
    auth: 'issuer',
    params: { chgId: 'chg' },
    query: {
      type: 'object',
      additionalProperties: false,
      properties: {
        ...paginationQueryProperties,
        category: { type: 'string', minLength: 1, maxLength: 64 },
        activated: { type: 'boolean' },
        q: { type: 'string', minLength: 1, maxLength: 100 },
        status: { type: 'string', enum: ['active', 'inactive'], default: 'active' },
      },
    },
    responses: {
      200: { description: 'A page of merchants.', schema: pageSchema(merchantSchema), links: MERCHANT_LINKS },
    },
    errorStatuses: [404],
    async handle(ctx, { params, query }) {
      const issuerId = issuerOf(ctx).id;
      await requireGroup(db, issuerId, params.chgId);
      const and: Prisma.MerchantWhereInput[] = [visibleTo(issuerId), { status: query.status }];
      if (query.category) and.push({ category: query.category });
      if (query.q) and.push({ name: { contains: query.q, mode: 'insensitive' } });
      const activeHere = { activations: { some: { chgId: params.chgId, issuerId, status: 'active' } } };
      if (query.activated === true) and.push(activeHere);
      if (query.activated === false) and.push({ NOT: activeHere });
      const after = decodeCursor(query.cursor, 2);
      if (after)
        and.push({
          OR: [{ name: { gt: String(after[0]) } }, { name: String(after[0]), id: { gt: String(after[1]) } }],
        });
      const rows = await db.merchant.findMany({
        where: { AND: and },
        orderBy: [{ name: 'asc' }, { id: 'asc' }],
        take: query.limit + 1,
        include: { activations: { where: { chgId: params.chgId, issuerId } } },
      });
      const page = toPage(rows, query.limit, (m) => [m.name, m.id]);
      ctx.body = { data: page.data.map((m) => presentMerchant(m, m.activations[0])), nextCursor: page.nextCursor };
    },
  });
}

function getMerchantRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/api/v2/chg/{chgId}/merchant/{merchantId}',
    operationId: 'getMerchant',
    summary: 'One merchant, with its activation for the group',
    tag,
    auth: 'issuer',
    params: { chgId: 'chg', merchantId: 'mp' },
    responses: { 200: { description: 'The merchant.', schema: merchantSchema } },
    errorStatuses: [404],
    async handle(ctx, { params }) {
      const issuerId = issuerOf(ctx).id;
      await requireGroup(db, issuerId, params.chgId);
      const merchant = await requireVisibleMerchant(db, issuerId, params.merchantId);
      const activation = await db.activation.findFirst({
        where: { chgId: params.chgId, merchantId: merchant.id, issuerId },
      });
      ctx.body = presentMerchant(merchant, activation);
    },
  });
}

function listOffersRoute(deps: AppDeps, catalogue: IssuerCatalogue): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/api/v2/chg/{chgId}/offers',
    operationId: 'listOffers',
    summary: 'List offers of the merchants the issuer sees',
    tag,
    auth: 'issuer',
    params: { chgId: 'chg' },
    query: offerListQuerySchema,
    responses: { 200: { ...offerPage, links: OFFER_LINKS } },
    errorStatuses: [404],
    async handle(ctx, { params, query }) {
      ctx.type = 'application/json';
      ctx.body = await listOffers(deps, catalogue, issuerOf(ctx), params.chgId, query);
    },
  });
}

function getOfferRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'get',
    path: '/api/v2/chg/{chgId}/offer/{offerId}',
    operationId: 'getOffer',
    summary: 'One offer',
    tag,
    auth: 'issuer',
    params: { chgId: 'chg', offerId: 'ofr' },
    responses: { 200: { description: 'The offer.', schema: offerSchema } },
    errorStatuses: [404],
    async handle(ctx, { params }) {
      const issuerId = issuerOf(ctx).id;
      await requireGroup(db, issuerId, params.chgId);
      const now = issuerNow(ctx, clock);
      const offer = await requireShownOffer(db, { issuerId, chgId: params.chgId, offerId: params.offerId, now });
      ctx.body = await presentShownOffer(db, issuerOf(ctx), params.chgId, offer, now);
    },
  });
}

function listMerchantOffersRoute(deps: AppDeps, catalogue: IssuerCatalogue): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/api/v2/chg/{chgId}/merchant/{merchantId}/offers',
    operationId: 'listMerchantOffers',
    summary: 'Offers of one merchant',
    tag,
    auth: 'issuer',
    params: { chgId: 'chg', merchantId: 'mp' },
    query: {
      type: 'object',
      additionalProperties: false,
      properties: { ...paginationQueryProperties, ...offerFilterProperties },
    },
    responses: { 200: { ...offerPage, links: OFFER_LINKS } },
    errorStatuses: [404],
    async handle(ctx, { params, query }) {
      const issuerId = issuerOf(ctx).id;
      await requireGroup(db, issuerId, params.chgId);
      await requireVisibleMerchant(db, issuerId, params.merchantId);
      ctx.type = 'application/json';
      ctx.body = await listOffers(deps, catalogue, issuerOf(ctx), params.chgId, {
        ...query,
        merchantId: params.merchantId,
      });
    },
  });
}

function getMerchantOfferRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'get',
    path: '/api/v2/chg/{chgId}/merchant/{merchantId}/offer/{offerId}',
    operationId: 'getMerchantOffer',
    summary: "One offer of one merchant (another merchant's offer: 404 offer_not_found)",
    tag,
    auth: 'issuer',
    params: { chgId: 'chg', merchantId: 'mp', offerId: 'ofr' },
    responses: { 200: { description: 'The offer.', schema: offerSchema } },
    errorStatuses: [404],
    async handle(ctx, { params }) {
      const issuerId = issuerOf(ctx).id;
      await requireGroup(db, issuerId, params.chgId);
      await requireVisibleMerchant(db, issuerId, params.merchantId);
      const now = issuerNow(ctx, clock);
      const offer = await requireShownOffer(db, {
        issuerId,
        chgId: params.chgId,
        offerId: params.offerId,
        merchantId: params.merchantId,
        now,
      });
      ctx.body = await presentShownOffer(db, issuerOf(ctx), params.chgId, offer, now);
    },
  });
}
