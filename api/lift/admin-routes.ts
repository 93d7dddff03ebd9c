// Operator API (API.md, Targeted offers, "Lift report"): what an offer, or all of a merchant's
// offers, changed in what enrolled groups spent at the merchant, the treated arm against its
// holdout. Read-only; any operator may read it.
import { errors } from '../../core/errors';
import { defineRoute, type RouteSpec } from '../route';
import type { AppDeps, Clock } from '../deps';
import type { Db } from '../../prisma/client';
import { shiftedNow } from '../sandbox/issuer-clock';
import { liftQuerySchema, merchantLiftSchema, offerLiftSchema } from './schemas';
import { armFigures, issuerClockOffsetMs, requireMerchantOffers, requireOffer } from './store';
import { presentLiftFigures } from './present';

const tag = 'Operator';

const WINDOW_RULES =
  'Arms are the groups enrolled in the audience (treated or control); with issuerId, only that issuer’s groups. A ' +
  "group's spend is its settled purchases at the merchant from its entry into the offer (or `from`, the later) to " +
  '`to`, each net of its refunds in the same currency dated before `to`. 400 invalid_query naming the field for a ' +
  'malformed parameter or a `to` not after `from`.';

export function liftAdminRoutes(deps: AppDeps): RouteSpec[] {
  return [offerLiftRoute(deps), merchantLiftRoute(deps)];
}

interface LiftQuery {
  issuerId?: string;
  from?: string;
  to?: string;
}

/** The window asked for, or its defaults: from the first offer's start to now (the issuer's, when named). */
async function windowOf(db: Db, clock: Clock, query: LiftQuery, defaultFrom: Date): Promise<{ from: Date; to: Date }> {
  const offsetMs = query.issuerId === undefined ? 0 : await issuerClockOffsetMs(db, query.issuerId);
  const from = query.from === undefined ? defaultFrom : new Date(query.from);
  const to = query.to === undefined ? shiftedNow(clock, offsetMs) : new Date(query.to);
  if (to <= from)
    throw errors.validation('invalid_query', `to (${to.toISOString()}) must be after from (${from.toISOString()}).`, [
      { path: query.to === undefined ? '/from' : '/to', message: 'must be after from' },
    ]);
  return { from, to };
}

function offerLiftRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'get',
    path: '/admin/v1/offers/{offerId}/lift',
    operationId: 'getOfferLift',
    summary: "An offer's lift: the treated arm's spend at the merchant against its holdout's",
    description: WINDOW_RULES + ' The method: docs/decisions/0047-holdout-and-lift.md.',
    tag,
    auth: 'operator',
    params: { offerId: 'ofr' },
    query: liftQuerySchema,
    responses: { 200: { description: 'The report.', schema: offerLiftSchema } },
    errorStatuses: [404],
    reasonCodes: {
      400: { invalid_query: 'a malformed parameter, or a to not after from' },
      404: { offer_not_found: 'no such offer', issuer_not_found: 'issuerId names no issuer' },
    },
    async handle(ctx, { params, query }) {
      const offer = await requireOffer(db, params.offerId);
      const window = await windowOf(db, clock, query, offer.startsAt);
      const arms = await armFigures(db, {
        merchantId: offer.merchantId,
        offerIds: [offer.id],
        issuerId: query.issuerId,
        ...window,
      });
      ctx.body = { offerId: offer.id, ...presentLiftFigures(window, arms) };
    },
  });
}

function merchantLiftRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'get',
    path: '/admin/v1/merchants/{merchantId}/lift',
    operationId: 'getMerchantLift',
    summary: "A merchant's lift: its offers' arms added up",
    description:
      WINDOW_RULES +
      ' Each arm adds up the enrolments of every offer of the merchant: a group enrolled in two offers counts once ' +
      'in each (its spend twice), so that each offer weighs by its groups; the interval, which takes groups as ' +
      'independent, is then narrower than it should be (docs/decisions/0047-holdout-and-lift.md). ' +
      "The window defaults to the merchant's earliest offer's startsAt (without offers, its creation) to now.",
    tag,
    auth: 'operator',
    params: { merchantId: 'mp' },
    query: liftQuerySchema,
    responses: { 200: { description: 'The report.', schema: merchantLiftSchema } },
    errorStatuses: [404],
    reasonCodes: {
      400: { invalid_query: 'a malformed parameter, or a to not after from' },
      404: { merchant_not_found: 'no such merchant', issuer_not_found: 'issuerId names no issuer' },
    },
    async handle(ctx, { params, query }) {
      const { createdAt, offers } = await requireMerchantOffers(db, params.merchantId);
      const window = await windowOf(db, clock, query, offers[0]?.startsAt ?? createdAt);
      const offerIds = offers.map((o) => o.id);
      const arms = await armFigures(db, {
        merchantId: params.merchantId,
        offerIds,
        issuerId: query.issuerId,
        ...window,
      });
      ctx.body = { merchantId: params.merchantId, offerIds, ...presentLiftFigures(window, arms) };
    },
  });
}
