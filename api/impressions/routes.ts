// Offer impressions (API.md, Targeted offers, "Impressions"): the issuer's app reports the offers
// it showed a group, so that the lift report can say how many the treated arm saw.
import { defineRoute, type RouteSpec } from '../route';
import { issuerOf } from '../middleware/auth';
import { issuerNow } from '../sandbox/issuer-clock';
import type { AppDeps } from '../deps';
import { impressionResultsSchema, impressionsInputSchema } from './schemas';
import { storeImpressions } from './store';
import { presentImpressionResults } from './present';

export function impressionRoutes(deps: AppDeps): RouteSpec[] {
  return [reportImpressionsRoute(deps)];
}

function reportImpressionsRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'post',
    path: '/api/v2/chg/{chgId}/offer-impressions',
    operationId: 'reportOfferImpressions',
    summary: 'Report the offers the app showed the group',
    description:
      'Each item is stored or refused on its own, in order. An item is refused (its result holds the error object) ' +
      'for an offer the group is not shown: unknown, not one of its merchants, or a targeted offer the group is not ' +
      'treated for (404 offer_not_found, the same answer for each, as the offer routes give); or when `at` is more than ' +
      "5 minutes after the issuer's now (400 impression_in_future). The same offer, instant and placement sent again " +
      'is counted once (status duplicate). 202 when at least one item was stored or was already there, 400 when every ' +
      'item was refused. An Idempotency-Key makes a resent batch answer as the first time.',
    tag: 'Merchants and offers',
    auth: 'issuer',
    params: { chgId: 'chg' },
    body: impressionsInputSchema,
    responses: {
      202: { description: 'Per-item results; at least one item stored.', schema: impressionResultsSchema },
      400: {
        description: 'Every item refused (per-item results), or the batch itself is invalid (error object).',
        schema: { oneOf: [impressionResultsSchema, { $ref: '#/components/schemas/Error' }] },
      },
    },
    errorStatuses: [404],
    reasonCodes: {
      400: { impression_in_future: "an item's `at` is more than 5 minutes after the issuer's now (in its result)" },
      404: {
        chg_not_found: 'the group is not the issuer’s',
        offer_not_found: 'in an item’s result: an offer the group is not shown',
      },
    },
    async handle(ctx, { params, body }) {
      const outcomes = await storeImpressions(db, {
        issuerId: issuerOf(ctx).id,
        chgId: params.chgId,
        items: body.impressions,
        now: issuerNow(ctx, clock),
      });
      ctx.status = outcomes.some((o) => o.status !== 'refused') ? 202 : 400;
      ctx.body = presentImpressionResults(outcomes);
    },
  });
}
