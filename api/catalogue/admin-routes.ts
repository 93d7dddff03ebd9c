// Operator catalogue API (API.md, Operator API): merchants and their offers.
import { BUDGET_RAISE_LIMIT_MINOR, budgetRaiseReason } from '../../core/rules/four-eyes';
import { PENDING_APPROVAL } from '../approvals/schemas';
import { fromBody, fromPath, linksTo } from '../links';
import { defineRoute, type RouteSpec } from '../route';
import { decodeCursor, pageSchema, paginationQueryProperties, toPage } from '../pagination';
import type { AppDeps } from '../deps';
import {
  adminMerchantSchema,
  adminOfferQuerySchema,
  adminOfferSchema,
  budgetMonthQuerySchema,
  merchantCreateSchema,
  merchantPatchSchema,
  offerCreateSchema,
  offerPatchSchema,
} from './schemas';
import {
  budgetUsedOf,
  findOfferAdmin,
  getMerchant,
  listOffersAdmin,
  saveMerchant,
  saveOffer,
  updateMerchant,
  updateOffer,
} from './store';
import { presentAdminMerchant, presentAdminOffer } from './present';
import { beginEnrolmentRun, type EnrolmentRunReason } from '../../core/domain/enrolment-runs';

const tag = 'Operator catalogue';
// Balance available only once expired could never be spent; offers never stack without a ceiling
// (api/catalogue/store.ts).
const MERCHANT_RULES =
  'brandedBalance.availabilityDelayDays must be below expiryDays, as given or as stored (400 availability_not_before_expiry); ' +
  'stacking stack needs a stackCapBps, given or stored (400 stack_cap_required).';
const MERCHANT_REASONS = {
  availability_not_before_expiry: 'the branded availability delay is not below the expiry, as given or as stored',
  stack_cap_required: 'stacking is stack and no stackCapBps is given or stored',
};

const merchantResponse = { description: 'The merchant.', schema: adminMerchantSchema };
const offerResponse = {
  description:
    'The offer (status computed now; catalogueStatus as stored), with its commission and what its budget has given in the current period.',
  schema: adminOfferSchema,
};
/** The instant whose budget period an operator's read shows: the first of the month asked for, else now. */
const budgetAtOf = (period: string | undefined, now: Date): Date =>
  period === undefined ? now : new Date(`${period}-01T00:00:00.000Z`);

const OFFER_FUNDING_RULES =
  'budgetMinor caps the reward (cashback and branded) the offer gives across every group of every issuer, per calendar ' +
  'month (UTC) of the purchase date with budgetPeriod month, else for its life; funding.issuerShareBps is the issuer’s share ' +
  'of each reward (the merchant funds the rest); commission (rateBps of the amount rewarded on, plus flatMinor) is what the ' +
  'merchant owes per qualifying settled purchase. Lowering budgetMinor below what was used stops the offer for the period.';

export function catalogueAdminRoutes(deps: AppDeps): RouteSpec[] {
  return [
    createMerchantRoute(deps),
    listMerchantsAdminRoute(deps),
    getMerchantAdminRoute(deps),
    updateMerchantRoute(deps),
    createOfferRoute(deps),
    listOffersAdminRoute(deps),
    getOfferAdminRoute(deps),
    updateOfferRoute(deps),
  ];
}

function createMerchantRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'post',
    path: '/admin/v1/merchants',
    operationId: 'createMerchant',
    summary: 'Add a merchant to the catalogue',
    description:
      'issuerIds null (the default) makes the merchant visible to every issuer. ' + MERCHANT_RULES + ' Audited.',
    tag,
    auth: 'operator',
    body: merchantCreateSchema,
    reasonCodes: { 400: MERCHANT_REASONS },
    responses: {
      201: {
        ...merchantResponse,
        links: linksTo(['getMerchantAdmin', 'updateMerchant', 'createOffer'], { merchantId: fromBody('/id') }),
      },
    },
    async handle(ctx, { body }) {
      const { merchant } = await saveMerchant(db, body, ctx.state.actor, clock.now());
      ctx.status = 201;
      ctx.body = presentAdminMerchant(merchant);
    },
  });
}

function listMerchantsAdminRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/admin/v1/merchants',
    operationId: 'listMerchantsAdmin',
    summary: 'List the catalogue, by name then id',
    tag,
    auth: 'operator',
    query: { type: 'object', additionalProperties: false, properties: paginationQueryProperties },
    responses: {
      200: {
        description: 'A page of merchants.',
        schema: pageSchema(adminMerchantSchema),
        links: linksTo(['getMerchantAdmin', 'updateMerchant', 'createOffer'], { merchantId: fromBody('/data/0/id') }),
      },
    },
    async handle(ctx, { query }) {
      const after = decodeCursor(query.cursor, 2);
      const rows = await db.merchant.findMany({
        where: after
          ? { OR: [{ name: { gt: String(after[0]) } }, { name: String(after[0]), id: { gt: String(after[1]) } }] }
          : {},
        orderBy: [{ name: 'asc' }, { id: 'asc' }],
        take: query.limit + 1,
      });
      const page = toPage(rows, query.limit, (m) => [m.name, m.id]);
      ctx.body = { data: page.data.map(presentAdminMerchant), nextCursor: page.nextCursor };
    },
  });
}

function getMerchantAdminRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/admin/v1/merchants/{merchantId}',
    operationId: 'getMerchantAdmin',
    summary: 'Read a merchant with its match rules and visibility',
    tag,
    auth: 'operator',
    params: { merchantId: 'mp' },
    responses: { 200: merchantResponse },
    errorStatuses: [404],
    async handle(ctx, { params }) {
      ctx.body = presentAdminMerchant(await getMerchant(db, params.merchantId));
    },
  });
}

function updateMerchantRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'patch',
    path: '/admin/v1/merchants/{merchantId}',
    operationId: 'updateMerchant',
    summary: 'Change a merchant (status: inactive deactivates it)',
    description: `Only the fields given change; inside brandedBalance and matchRules too. ${MERCHANT_RULES} Audited.`,
    tag,
    auth: 'operator',
    params: { merchantId: 'mp' },
    body: merchantPatchSchema,
    responses: { 200: merchantResponse },
    errorStatuses: [404],
    reasonCodes: { 400: MERCHANT_REASONS },
    async handle(ctx, { params, body }) {
      ctx.body = presentAdminMerchant(await updateMerchant(db, params.merchantId, body, ctx.state.actor, clock.now()));
    },
  });
}

function createOfferRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'post',
    path: '/admin/v1/merchants/{merchantId}/offers',
    operationId: 'createOffer',
    summary: 'Add an offer to a merchant',
    description:
      'The reward is either reward (percent, tiered, spend_x_get_y or nth_purchase) or the flat cashbackRateBps and ' +
      'brandedRateBps, at least one rate above 0 unless the reward is cumulative; endsAt (exclusive) must not be before ' +
      'startsAt. A cumulative offer (spend_x_get_y, nth_purchase) has no commission or maxRewardPerChgMinor; its ' +
      "budget pays its completions as far as it reaches, and an issuer's share is of each completion's reward. " +
      OFFER_FUNDING_RULES +
      ' Audited.',
    tag,
    auth: 'operator',
    params: { merchantId: 'mp' },
    body: offerCreateSchema,
    responses: {
      201: {
        ...offerResponse,
        links: linksTo(['getOfferAdmin', 'updateOffer'], {
          merchantId: fromPath('merchantId'),
          offerId: fromBody('/id'),
        }),
      },
    },
    errorStatuses: [404],
    reasonCodes: {
      400: {
        invalid_body:
          "both rates 0, or endsAt before startsAt; no reward; reward with flat rates; tiers' minimums not ascending, or every tier 0; a cumulative offer with a commission or maxRewardPerChgMinor",
      },
    },
    async handle(ctx, { params, body }) {
      const now = clock.now();
      const { offer } = await saveOffer(db, params.merchantId, body, ctx.state.actor, now);
      await startEnrolment(deps, offer.id, 'created', now);
      ctx.status = 201;
      ctx.body = presentAdminOffer(offer, now, 0);
    },
  });
}

function updateOfferRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'patch',
    path: '/admin/v1/merchants/{merchantId}/offers/{offerId}',
    operationId: 'updateOffer',
    summary: 'Change an offer; endsAt = now ends it, status inactive withdraws it',
    description:
      "Activations made through the offer stay valid and serve the merchant's other offers. endsAt must not be before " +
      'startsAt, the one given or the one stored. Only the fields given change; inside funding and commission too. A ' +
      'reward replaces the reward whole; the flat rates alone change a percent offer only. A cumulative offer keeps ' +
      'its reward and maxRedemptionsPerChg once a group has progress (409 offer_in_progress). ' +
      OFFER_FUNDING_RULES +
      ' Audited.',
    tag,
    auth: 'operator',
    params: { merchantId: 'mp', offerId: 'ofr' },
    body: offerPatchSchema,
    responses: { 200: offerResponse, 202: PENDING_APPROVAL },
    errorStatuses: [404, 409],
    fourEyes: {
      when: `budgetMinor raised by more than ${BUDGET_RAISE_LIMIT_MINOR} minor units, or removed`,
      async check(_ctx, { params, body }) {
        if (body.budgetMinor === undefined) return undefined;
        const offer = await db.offer.findFirst({
          where: { id: params.offerId, merchantId: params.merchantId },
          select: { budgetMinor: true },
        });
        // No such offer: the handler answers 404, nothing to hold.
        if (!offer) return undefined;
        const before = offer.budgetMinor === null ? null : Number(offer.budgetMinor);
        return budgetRaiseReason(before, body.budgetMinor as number | null);
      },
    },
    reasonCodes: {
      400: {
        invalid_body:
          "endsAt before startsAt, as given or as stored; reward with flat rates; flat rates on a tiered or cumulative offer; tiers' minimums not ascending; a cumulative offer with a commission or maxRewardPerChgMinor",
      },
      409: {
        offer_in_progress: 'the reward or maxRedemptionsPerChg of a cumulative offer on which groups have progress',
      },
    },
    async handle(ctx, { params, body }) {
      const now = clock.now();
      const offer = await updateOffer(db, params.merchantId, params.offerId, body, ctx.state.actor, now);
      if (TARGETING_FIELDS.some((field) => body[field] !== undefined))
        await startEnrolment(deps, offer.id, 'changed', now);
      const used = await budgetUsedOf(db, [offer], now);
      ctx.body = presentAdminOffer(offer, now, used.get(offer.id)!);
    },
  });
}

/** The fields whose change may enrol groups the offer had not enrolled: a PATCH of any starts a run. */
const TARGETING_FIELDS = ['activation', 'audience', 'holdoutBps', 'startsAt'] as const;

/**
 * Enrols the groups that exist when a targeted offer that has started is created or its targeting
 * changes (core/domain/enrolment-runs.ts). The offer is saved whatever happens here: a run that
 * could not be opened or started is the worker's enrolment watch's to start, and groups not yet
 * enrolled enrol when first evaluated.
 */
async function startEnrolment(deps: AppDeps, offerId: string, reason: EnrolmentRunReason, now: Date): Promise<void> {
  if (!deps.temporal) return;
  try {
    await beginEnrolmentRun(deps.db, deps.temporal, offerId, reason, now);
  } catch {
    // The watch starts an opened row once it has seen it twice, and opens a run for an offer with
    // none since its start; other groups enrol when first evaluated.
  }
}

function listOffersAdminRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'get',
    path: '/admin/v1/merchants/{merchantId}/offers',
    operationId: 'listOffersAdmin',
    summary: "A merchant's offers, by startsAt then id, with what their budgets have given",
    description:
      "Every offer of the merchant whatever its status, each with its commission and its budget's use in the current period " +
      '(the current calendar month in UTC of a monthly budget), or in the month given as period (a sandbox issuer spends ' +
      'the month of its own clock).',
    tag,
    auth: 'operator',
    params: { merchantId: 'mp' },
    query: {
      type: 'object',
      additionalProperties: false,
      properties: { ...paginationQueryProperties, period: budgetMonthQuerySchema },
    },
    responses: {
      200: {
        description: 'A page of offers.',
        schema: pageSchema(adminOfferSchema),
        links: linksTo(['getOfferAdmin', 'updateOffer'], {
          merchantId: fromPath('merchantId'),
          offerId: fromBody('/data/0/id'),
        }),
      },
    },
    errorStatuses: [404],
    async handle(ctx, { params, query }) {
      const now = clock.now();
      const budgetAt = budgetAtOf(query.period, now);
      const page = await listOffersAdmin(db, params.merchantId, query);
      const used = await budgetUsedOf(db, page.data, budgetAt);
      ctx.body = {
        data: page.data.map((o) => presentAdminOffer(o, now, used.get(o.id)!, budgetAt)),
        nextCursor: page.nextCursor,
      };
    },
  });
}

function getOfferAdminRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'get',
    path: '/admin/v1/merchants/{merchantId}/offers/{offerId}',
    operationId: 'getOfferAdmin',
    summary: 'Read an offer with its commission and what its budget has given',
    description:
      "The budget's use is the current period's (the current calendar month in UTC of a monthly budget), or the month given " +
      'as period (a sandbox issuer spends the month of its own clock).',
    tag,
    auth: 'operator',
    params: { merchantId: 'mp', offerId: 'ofr' },
    query: adminOfferQuerySchema,
    responses: { 200: offerResponse },
    errorStatuses: [404],
    async handle(ctx, { params, query }) {
      const now = clock.now();
      const budgetAt = budgetAtOf(query.period, now);
      const offer = await findOfferAdmin(db, params.merchantId, params.offerId);
      const used = await budgetUsedOf(db, [offer], budgetAt);
      ctx.body = presentAdminOffer(offer, now, used.get(offer.id)!, budgetAt);
    },
  });
}
