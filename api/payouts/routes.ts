// Payout routes (API.md, "Cashback that is paid out"): an issuer pays its groups' payable
// cashback out, in a run over many groups or for one group now, and reads what was paid.
import { errors } from '../../core/errors';
import { fromBody, linksTo } from '../links';
import { defineRoute, type RouteSpec } from '../route';
import { issuerOf } from '../middleware/auth';
import { issuerNow } from '../sandbox/issuer-clock';
import { pageSchema } from '../pagination';
import type { AppDeps } from '../deps';
import type { Context } from 'koa';
import {
  groupPayoutBodySchema,
  payoutItemsQuerySchema,
  PayoutItemsCsv,
  PayoutItemsNdjson,
  payoutListQuerySchema,
  payoutRunBodySchema,
  payoutSchema,
} from './schemas';
import { createPayoutRun, findPayout, listPayouts, payGroupNow } from './store';
import { presentPayout } from './present';
import { ITEMS_CONTENT_TYPES, payoutItemsStream } from './items';

const tag = 'Payouts';
const payoutParams = { payoutId: 'po' } as const;

export function payoutRoutes(deps: AppDeps): RouteSpec[] {
  return [
    createPayoutRunRoute(deps),
    listPayoutsRoute(deps),
    getPayoutRoute(deps),
    getPayoutItemsRoute(deps),
    payGroupRoute(deps),
  ];
}

const HOLD =
  "Only payable cashback is paid: what a purchase earns is on hold for its return window (the offer's returnPeriodDays, else " +
  "the issuer's cashbackHoldDays, 30 days unless the operator set another) from its createdAt on the issuer's clock. " +
  'Each group paid gets a cashback_paid_out reward event (activity, negative amount), a ledger transfer chg_cashback -> ' +
  'issuer_payable and a cashback_paid_out webhook. A refund after payout claws back what the group no longer holds as owed ' +
  '(summary owedMinor), which its next cashback repays; the issuer may forgive it with a write_off adjustment.';

function idempotencyKeyOf(ctx: Context, what: string): string {
  const key = ctx.get('idempotency-key');
  if (!key)
    throw errors.validation('idempotency_key_required', `${what} needs an Idempotency-Key header.`, [
      { path: '/headers/Idempotency-Key', message: 'is required' },
    ]);
  return key;
}

function createPayoutRunRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'post',
    path: '/api/v2/payouts',
    operationId: 'createPayoutRun',
    summary: 'Pay out the payable cashback of every group (or the listed ones) at or above a minimum',
    description:
      'Starts a payout run: one Temporal workflow (payout/<issuer>/<payout id>, searchable by RewardsIssuerId) that pays ' +
      'every active group of the issuer (or those in chgIds) whose payable cashback, as of the run’s creation on the issuer’s ' +
      'clock, is at least minimumMinor: all of it, each group at most once whatever fails. One run at a time per issuer ' +
      '(409 payout_in_progress). The same Idempotency-Key answers the same run. Follow it with GET /api/v2/payouts/{payoutId} ' +
      'or the payout_completed webhook, then read its items file. ' +
      HOLD,
    tag,
    auth: 'issuer',
    body: payoutRunBodySchema,
    idempotencyKeyRequired: true,
    responses: {
      202: {
        description: 'Accepted: the run is processing.',
        schema: payoutSchema,
        links: linksTo(['getPayout', 'getPayoutItems'], { payoutId: fromBody('/id') }),
      },
    },
    errorStatuses: [404, 409, 503],
    reasonCodes: {
      400: { idempotency_key_required: 'the request has no Idempotency-Key header' },
      404: { chg_not_found: 'a listed group is not the issuer’s' },
      409: { payout_in_progress: 'another run of the issuer is processing (details.payoutId)' },
      503: { workflow_engine_unavailable: 'the run could not be started: nothing was paid, ask again later' },
    },
    async handle(ctx, { body }) {
      const key = idempotencyKeyOf(ctx, 'A payout run');
      const { payout } = await createPayoutRun(
        db,
        deps.temporal,
        { issuerId: issuerOf(ctx).id, idempotencyKey: key, at: issuerNow(ctx, clock) },
        body,
      );
      ctx.status = 202;
      ctx.body = presentPayout(payout);
    },
  });
}

function payGroupRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'post',
    path: '/api/v2/chg/{chgId}/payouts',
    operationId: 'payOutGroup',
    summary: "Pay out one group's payable cashback now (an instant cash-out)",
    description:
      'Pays the group now, in one transaction: all of its payable cashback, or amountMinor of it (409 insufficient_balance ' +
      'beyond what is payable, or when nothing is; nothing is posted). Answers the completed payout (kind group). ' +
      HOLD,
    tag,
    auth: 'issuer',
    params: { chgId: 'chg' },
    body: groupPayoutBodySchema,
    idempotencyKeyRequired: true,
    responses: {
      201: {
        description: 'Paid.',
        schema: payoutSchema,
        links: linksTo(['getPayout', 'getPayoutItems'], { payoutId: fromBody('/id') }),
      },
    },
    errorStatuses: [404, 409],
    reasonCodes: {
      400: { idempotency_key_required: 'the request has no Idempotency-Key header' },
      404: { chg_not_found: 'the group is not the issuer’s' },
      409: { insufficient_balance: 'more than the group’s payable cashback (details.availableMinor)' },
    },
    async handle(ctx, { params, body }) {
      const key = idempotencyKeyOf(ctx, 'A payout');
      const { payout } = await payGroupNow(
        db,
        { issuerId: issuerOf(ctx).id, idempotencyKey: key, at: issuerNow(ctx, clock) },
        params.chgId,
        body,
      );
      ctx.status = 201;
      ctx.body = presentPayout(payout);
    },
  });
}

function listPayoutsRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/api/v2/payouts',
    operationId: 'listPayouts',
    summary: "The issuer's payouts, newest first",
    tag,
    auth: 'issuer',
    query: payoutListQuerySchema,
    responses: { 200: { description: 'A page of payouts.', schema: pageSchema(payoutSchema) } },
    async handle(ctx, { query }) {
      const page = await listPayouts(db, issuerOf(ctx).id, query);
      ctx.body = { data: page.data.map(presentPayout), nextCursor: page.nextCursor };
    },
  });
}

function getPayoutRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/api/v2/payouts/{payoutId}',
    operationId: 'getPayout',
    summary: 'One payout: its status, how many groups it paid and how much',
    tag,
    auth: 'issuer',
    params: payoutParams,
    responses: { 200: { description: 'The payout.', schema: payoutSchema } },
    errorStatuses: [404],
    reasonCodes: { 404: { payout_not_found: 'the payout is not the issuer’s' } },
    async handle(ctx, { params }) {
      ctx.body = presentPayout(await findPayout(db, issuerOf(ctx).id, params.payoutId));
    },
  });
}

function getPayoutItemsRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/api/v2/payouts/{payoutId}/items',
    operationId: 'getPayoutItems',
    summary: 'The groups a payout paid, streamed as NDJSON or CSV, ending with a checksum line',
    description:
      'One line per group paid ({ chgId, externalId, amountMinor, currency, rewardEventId }), in chg id order, and a last ' +
      'line with the count, the total and the SHA-256 of every byte before it: the file a core banking system credits ' +
      'accounts from. It is final once the payout is completed (the checksum line names the status it was read at).',
    tag,
    auth: 'issuer',
    params: payoutParams,
    query: payoutItemsQuerySchema,
    responses: {
      200: {
        description: 'The items file, streamed.',
        content: {
          'application/x-ndjson': { schema: PayoutItemsNdjson },
          'text/csv': { schema: PayoutItemsCsv },
        },
      },
    },
    errorStatuses: [404],
    reasonCodes: { 404: { payout_not_found: 'the payout is not the issuer’s' } },
    async handle(ctx, { params, query }) {
      const payout = await findPayout(db, issuerOf(ctx).id, params.payoutId);
      const format = query.format ?? 'ndjson';
      ctx.set('Content-Type', ITEMS_CONTENT_TYPES[format]);
      ctx.set('Content-Disposition', `attachment; filename="payout_${payout.id}.${format}"`);
      ctx.set('Cache-Control', 'no-store');
      ctx.body = payoutItemsStream(db, payout, format);
    },
  });
}
