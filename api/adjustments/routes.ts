// Adjustment routes (API.md, Adjustments (customer service)): an issuer's customer service
// credits or debits a group's cashback or branded balance, funded by the issuer.
import { errors } from '../../core/errors';
import { fromBody, fromPath, linksTo } from '../links';
import { defineRoute, type RouteSpec } from '../route';
import { issuerOf } from '../middleware/auth';
import { issuerNow } from '../sandbox/issuer-clock';
import { pageSchema } from '../pagination';
import type { AppDeps } from '../deps';
import { adjustmentBodySchema, adjustmentListQuerySchema, adjustmentSchema, crossFieldViolation } from './schemas';
import { createAdjustment, findAdjustment, listAdjustments } from './store';
import { presentAdjustment } from './present';

const tag = 'Adjustments';
const params = { chgId: 'chg' } as const;

export function adjustmentRoutes(deps: AppDeps): RouteSpec[] {
  return [createAdjustmentRoute(deps), listAdjustmentsRoute(deps), getAdjustmentRoute(deps)];
}

const MONEY_RULES =
  'A credit (amountMinor > 0) is funded by the issuer (ledger account issuer_adjustments:<issuer>), never by a merchant; ' +
  "a branded credit opens a grant at the merchant, available at once and expiring after the merchant's expiryDays. " +
  'A debit (amountMinor < 0) never takes a balance below zero (409 insufficient_balance, nothing posted) and draws branded ' +
  'grants soonest-expiring first. A write-off (reasonCode write_off, cashback, amountMinor > 0) forgives cashback the group owes ' +
  '(a refund after payout; summary owedMinor), at most what it owes (409 insufficient_balance otherwise), funded by the issuer. ' +
  'Each adjustment is one balanced ledger transfer with its reward event ' +
  '(cashback_adjusted or branded_adjusted, signed), in the summary, activity, merchant balance, ledger entries and export, ' +
  'and a reward_adjusted webhook. The Idempotency-Key is required and never posts twice (the same key and body answer the ' +
  'same adjustment, even after the 24 h replay window).';

function createAdjustmentRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'post',
    path: '/api/v2/chg/{chgId}/adjustments',
    operationId: 'createAdjustment',
    summary: "Credit or debit the group's cashback or branded balance (customer service)",
    description:
      MONEY_RULES +
      ' 400 invalid_body also when a branded adjustment has no merchantId or a cashback one has one.' +
      " 400 adjustment_too_large: |amountMinor| above the issuer's adjustmentLimitMinor (10000 unless the operator set another).",
    tag,
    auth: 'issuer',
    params,
    body: adjustmentBodySchema,
    idempotencyKeyRequired: true,
    responses: {
      201: {
        description: 'Posted.',
        schema: adjustmentSchema,
        links: linksTo(['getAdjustment'], { chgId: fromPath('chgId'), adjustmentId: fromBody('/id') }),
      },
    },
    errorStatuses: [404, 409],
    reasonCodes: {
      400: {
        idempotency_key_required: 'the request has no Idempotency-Key header',
        adjustment_too_large: "|amountMinor| is above the issuer's adjustmentLimitMinor",
      },
      404: {
        chg_not_found: 'the group is not the issuer’s',
        merchant_not_found: 'the merchant is not one the issuer sees',
        transaction_not_found: 'transactionId is not a txn_ of this group',
      },
      409: {
        insufficient_balance:
          'a debit beyond what the group holds, or a write-off beyond what it owes (details.availableMinor)',
        branded_not_enabled: 'a branded credit at a merchant without branded balance',
      },
    },
    async handle(ctx, { params, body }) {
      const key = ctx.get('idempotency-key');
      if (!key)
        throw errors.validation('idempotency_key_required', 'Posting an adjustment needs an Idempotency-Key header.', [
          { path: '/headers/Idempotency-Key', message: 'is required' },
        ]);
      const misplaced = crossFieldViolation(body);
      if (misplaced) throw errors.validation('invalid_body', `${misplaced.message}.`, [misplaced]);
      const issuer = issuerOf(ctx);
      const { adjustment } = await createAdjustment(
        db,
        { issuerId: issuer.id, tokenId: issuer.tokenId },
        params.chgId,
        body,
        key,
        { issuer: issuerNow(ctx, clock), real: clock.now() },
      );
      ctx.status = 201;
      ctx.body = presentAdjustment(adjustment);
    },
  });
}

function listAdjustmentsRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/api/v2/chg/{chgId}/adjustments',
    operationId: 'listAdjustments',
    summary: "The group's adjustments, newest first",
    tag,
    auth: 'issuer',
    params,
    query: adjustmentListQuerySchema,
    responses: {
      200: {
        description: 'A page of adjustments.',
        schema: pageSchema(adjustmentSchema),
        links: linksTo(['getAdjustment'], { chgId: fromPath('chgId'), adjustmentId: fromBody('/data/0/id') }),
      },
    },
    errorStatuses: [404],
    async handle(ctx, { params, query }) {
      ctx.body = await listAdjustments(db, issuerOf(ctx).id, params.chgId, query);
    },
  });
}

function getAdjustmentRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/api/v2/chg/{chgId}/adjustments/{adjustmentId}',
    operationId: 'getAdjustment',
    summary: 'One adjustment',
    tag,
    auth: 'issuer',
    params: { chgId: 'chg', adjustmentId: 'adj' },
    responses: { 200: { description: 'The adjustment.', schema: adjustmentSchema } },
    errorStatuses: [404],
    async handle(ctx, { params }) {
      ctx.body = presentAdjustment(await findAdjustment(db, issuerOf(ctx).id, params.chgId, params.adjustmentId));
    },
  });
}
