// Per-transaction reconciliation (SPEC.md 4.3, API.md): reward-detail, reward-overviews and
// the match trace. Transactions are settled events (`txn_`) of the calling issuer's group.
import type { Db } from '../../prisma/client';
import { defineRoute, type RouteSpec } from '../route';
import { issuerOf } from '../middleware/auth';
import { errors } from '../../core/errors';
import { isId } from '../../core/ids';
import type { AppDeps } from '../deps';
import { findRewardDetail, findRewardDetails, publicDetail } from './reward-detail';
import { groupNotFound } from '../catalogue/scope';
import { matchTraceSchema, overviewsBodySchema, overviewsSchema, rewardDetailSchema } from './schemas';
import { findLedgerLineage } from '../ledger/lineage';
import { LedgerEntries } from '../ledger/schemas';

const tag = 'Rewards';
const params = { chgId: 'chg', txnId: 'txn' } as const;
const transactionNotFound = (chgId: string, txnId: string) =>
  errors.notFound('transaction_not_found', `No transaction ${txnId} in group ${chgId}.`);
/** One statement: the detail, and which 404 it is when there is none. */
const findDetail = async (db: Db, issuerId: string, chgId: string, txnId: string) => {
  const found = await findRewardDetail(db, issuerId, chgId, txnId);
  if (!found.groupFound) throw groupNotFound(chgId);
  if (found.details.length === 0) throw transactionNotFound(chgId, txnId);
  return publicDetail(found.details[0]);
};

export function transactionRoutes(deps: AppDeps): RouteSpec[] {
  return [
    getTransactionRewardDetailRoute(deps),
    getTransactionRewardOverviewsRoute(deps),
    getTransactionMatchTraceRoute(deps),
    getTransactionLedgerEntriesRoute(deps),
  ];
}

function getTransactionRewardDetailRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/api/v2/chg/{chgId}/transaction/{txnId}/reward-detail',
    operationId: 'getTransactionRewardDetail',
    summary: 'Reward outcome of one settled transaction (version: current)',
    description:
      'status: pending (accepted, processing not finished), matched (final effects posted), not_matched (finished, nothing earned ' +
      'or spent; merchantId present if a merchant was identified), reversed (all earned reward clawed back), unknown (processing ' +
      'failed and awaits an operator). For a refund, clawedBackAmountMinor is what that refund took back.',
    tag,
    auth: 'issuer',
    params,
    responses: { 200: { description: 'The reward detail.', schema: rewardDetailSchema } },
    errorStatuses: [404],
    async handle(ctx, { params: p }) {
      ctx.body = await findDetail(db, issuerOf(ctx).id, p.chgId, p.txnId);
    },
  });
}

function getTransactionRewardOverviewsRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'post',
    path: '/api/v2/chg/{chgId}/transactions/reward-overviews',
    operationId: 'getTransactionRewardOverviews',
    summary: 'Reward details of many settled transactions, by our txn_ ids or the issuer ids',
    description:
      '1 to 100 ids in all. Ids that are unknown, of another group or of another issuer are listed in notFound.',
    tag,
    auth: 'issuer',
    params: { chgId: 'chg' },
    body: overviewsBodySchema,
    responses: {
      200: { description: 'Found details, in request order, and the ids not found.', schema: overviewsSchema },
    },
    errorStatuses: [404],
    async handle(ctx, { params: p, body }) {
      const transactionIds = body.transactionIds ?? [];
      const externalIds = body.externalIds ?? [];
      if (transactionIds.length + externalIds.length === 0 || transactionIds.length + externalIds.length > 100) {
        throw errors.validation('invalid_body', 'Send 1 to 100 ids in all.', [
          { path: '/', message: 'must name 1 to 100 transactions' },
        ]);
      }
      const found = await findRewardDetails(db, issuerOf(ctx).id, p.chgId, {
        transactionIds: transactionIds.filter((t) => isId('txn', t)),
        externalIds,
      });
      if (!found.groupFound) throw groupNotFound(p.chgId);
      const byId = new Map(found.details.map((d) => [d.transactionId, d]));
      const byExternal = new Map(found.details.map((d) => [d.externalId, d]));
      const data = [];
      const notFound = [];
      for (const id of transactionIds) byId.has(id) ? data.push(publicDetail(byId.get(id)!)) : notFound.push(id);
      for (const id of externalIds)
        byExternal.has(id) ? data.push(publicDetail(byExternal.get(id)!)) : notFound.push(id);
      ctx.body = { data, notFound };
    },
  });
}

function getTransactionMatchTraceRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/api/v2/chg/{chgId}/transaction/{txnId}/match-trace',
    operationId: 'getTransactionMatchTrace',
    summary: 'Why a transaction did or did not earn (recorded when it was processed)',
    description:
      'The merchant match (rule or none), every offer considered with each condition and its outcome, the winning offer, ' +
      'the reward arithmetic and the spend decision. For a refund: the clawback arithmetic. trace is null while pending.',
    tag,
    auth: 'issuer',
    params,
    responses: { 200: { description: 'The recorded decision.', schema: matchTraceSchema } },
    errorStatuses: [404],
    async handle(ctx, { params: p }) {
      const issuerId = issuerOf(ctx).id;
      const detail = await findDetail(db, issuerId, p.chgId, p.txnId);
      const event = await db.ingestedEvent.findFirstOrThrow({
        where: { id: p.txnId, issuerId, chgId: p.chgId, kind: 'settled' },
      });
      ctx.body = {
        transactionId: event.id,
        externalId: event.externalId,
        status: detail.status,
        merchantId: event.merchantId,
        processedAt: event.processedAt?.toISOString() ?? null,
        failureReason: event.failureReason,
        trace: event.matchTrace ?? null,
      };
    },
  });
}

function getTransactionLedgerEntriesRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/api/v2/chg/{chgId}/transaction/{txnId}/ledger-entries',
    operationId: 'getTransactionLedgerEntries',
    summary: "The ledger transfers and entries behind a transaction's reward events (lineage for reconciliation)",
    description:
      "The transfers of each reward event of reward-detail's rewardEventIds, oldest first, each with its two entries: the account " +
      "(id, kind, owning group and merchant) and the amount, debits negative and credits positive, so a transfer's entries sum " +
      "to 0. One transfer per event, and on a funded offer also the issuer's share of the reward (issuer_share_cashback, " +
      'issuer_share_branded: the issuer_funding account) and the merchant’s commission (commission_charged) with the earn, ' +
      'and their returns (issuer_share_returned, commission_returned) with a refund’s clawback. Read in one snapshot. A ' +
      'pending or not_matched transaction has no transfers (data is empty).',
    tag,
    auth: 'issuer',
    params,
    responses: { 200: { description: 'The transfers and their entries.', schema: LedgerEntries } },
    errorStatuses: [404],
    async handle(ctx, { params: p }) {
      const issuerId = issuerOf(ctx).id;
      const transfers = await findLedgerLineage(db, issuerId, p.chgId, p.txnId);
      if (!transfers) {
        // Says which 404 it is (group or transaction), exactly as reward-detail does.
        await findDetail(db, issuerId, p.chgId, p.txnId);
        throw transactionNotFound(p.chgId, p.txnId);
      }
      ctx.body = { transactionId: p.txnId, data: transfers };
    },
  });
}
