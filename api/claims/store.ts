// Claims for the routes: filing one (its row, then its workflow), reading them, and handing an
// operator's decision to the claim's workflow as its `resolve` update. The deciding is the
// workflow's (workflows/claim-resolution.ts, activities/claims).
import { TypedSearchAttributes } from '@temporalio/common';
import { WorkflowUpdateFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { errors, ApiError } from '../../core/errors';
import { newId } from '../../core/ids';
import { classifyFailure } from '../../core/failures';
import { CLAIM_DECISION_REFUSED } from '../../core/failure-types';
import type { OperatorDecision } from '../../core/rules/claims';
import type { WorkflowEngine } from '../../core/workflow-engine';
import type { Db } from '../../prisma/client';
import type { Claim, Prisma } from '../../prisma/generated/client';
import {
  CLAIM_WORKFLOW_TYPE,
  claimWorkflowId,
  resolveClaimUpdate,
  type ClaimResolutionInput,
} from '../../workflows/claim-resolution';
import {
  RewardsChgId,
  RewardsIssuerId,
  RewardsMerchantId,
  RewardsStatus,
  RewardsTransactionId,
} from '../../workflows/search-attributes';
import { createdAtKey, createdAtKeyset, toPage } from '../pagination';
import { requireGroup, requireVisibleMerchant } from '../catalogue/scope';
import type { AdminClaimListQuery, ClaimInput, ClaimListQuery } from './schemas';

const engineMissing = () =>
  errors.unavailable('workflow_engine_unavailable', 'The workflow engine is not configured; file the claim later.');

export async function fileClaim(
  db: Db,
  temporal: WorkflowEngine | undefined,
  issuerId: string,
  chgId: string,
  input: ClaimInput,
  now: Date,
): Promise<Claim> {
  await requireGroup(db, issuerId, chgId);
  if (input.merchantId) await requireVisibleMerchant(db, issuerId, input.merchantId);
  const transactionId = await claimedTransactionId(db, issuerId, chgId, input);
  if (!temporal) throw engineMissing();
  const id = newId('clm');
  const workflowId = claimWorkflowId(issuerId, id);
  const claim = await insertClaim(db, {
    id,
    issuerId,
    chgId,
    transactionId,
    externalId: input.externalId ?? null,
    reason: input.reason,
    merchantId: input.merchantId ?? null,
    note: input.note ?? null,
    workflowId,
    createdAt: now,
    updatedAt: now,
  });
  try {
    await startClaimWorkflow(temporal, claim);
  } catch (err) {
    // Unfiled rather than open without a decider: the issuer may file it again.
    await db.claim.deleteMany({ where: { id, status: 'open' } });
    if (classifyFailure(err) === 'workflow_engine_unavailable')
      throw errors.unavailable(
        'workflow_engine_unavailable',
        'The workflow engine is unreachable; file the claim later.',
      );
    throw err;
  }
  return claim;
}

/** The txn_ id the claim is about, when known now: given, or the settlement with that external id. */
async function claimedTransactionId(
  db: Db,
  issuerId: string,
  chgId: string,
  input: ClaimInput,
): Promise<string | null> {
  if (input.transactionId) {
    const txn = await db.ingestedEvent.findFirst({
      where: { id: input.transactionId, issuerId, chgId, kind: 'settled' },
      select: { id: true },
    });
    if (!txn) throw errors.notFound('transaction_not_found', `No transaction ${input.transactionId} in this group.`);
    return txn.id;
  }
  const settled = await db.ingestedEvent.findFirst({
    where: { issuerId, chgId, kind: 'settled', externalId: input.externalId! },
    select: { id: true },
  });
  return settled?.id ?? null;
}

async function insertClaim(db: Db, data: Prisma.ClaimUncheckedCreateInput): Promise<Claim> {
  try {
    return await db.claim.create({ data });
  } catch (err) {
    if (classifyFailure(err) !== 'unique_violation') throw err;
    const open = await db.claim.findFirst({
      where: { issuerId: data.issuerId, transactionId: data.transactionId, status: { in: ['open', 'needs_review'] } },
      select: { id: true, status: true },
    });
    throw errors.conflict('claim_open', `Transaction ${data.transactionId} already has an open claim.`, {
      claimId: open?.id ?? null,
      status: open?.status ?? null,
    });
  }
}

function startClaimWorkflow(temporal: WorkflowEngine, claim: Claim) {
  const input: ClaimResolutionInput = { issuerId: claim.issuerId, claimId: claim.id };
  return temporal.client.workflow.start(CLAIM_WORKFLOW_TYPE, {
    workflowId: claim.workflowId,
    taskQueue: temporal.taskQueue,
    args: [input],
    typedSearchAttributes: new TypedSearchAttributes([
      { key: RewardsIssuerId, value: claim.issuerId },
      { key: RewardsChgId, value: claim.chgId },
      { key: RewardsTransactionId, value: claim.transactionId ? [claim.transactionId] : [] },
      ...(claim.merchantId ? [{ key: RewardsMerchantId, value: claim.merchantId }] : []),
      { key: RewardsStatus, value: 'open' },
    ]),
  });
}

const notFound = (claimId: string) => errors.notFound('claim_not_found', `No claim ${claimId}.`);

export async function findClaim(db: Db, issuerId: string, chgId: string, claimId: string): Promise<Claim> {
  const claim = await db.claim.findFirst({ where: { id: claimId, issuerId, chgId } });
  if (!claim) throw notFound(claimId);
  return claim;
}

export async function findClaimAsOperator(db: Db, claimId: string): Promise<Claim> {
  const claim = await db.claim.findUnique({ where: { id: claimId } });
  if (!claim) throw notFound(claimId);
  return claim;
}

/** Newest first for the issuer's group. */
export async function listClaims(db: Db, issuerId: string, chgId: string, query: ClaimListQuery) {
  await requireGroup(db, issuerId, chgId);
  return pageOf(db, { issuerId, chgId, ...(query.status ? { status: query.status } : {}) }, query, 'desc');
}

/** Oldest first: the operator's review queue is worked from the front. */
export function listClaimsAsOperator(db: Db, query: AdminClaimListQuery) {
  const where = {
    ...(query.status ? { status: query.status } : {}),
    ...(query.issuerId ? { issuerId: query.issuerId } : {}),
  };
  return pageOf(db, where, query, 'asc');
}

async function pageOf(
  db: Db,
  where: Prisma.ClaimWhereInput,
  query: { limit: number; cursor?: string },
  order: 'asc' | 'desc',
): Promise<{ data: Claim[]; nextCursor: string | null }> {
  const keyset = createdAtKeyset(query.cursor, order);
  const rows = await db.claim.findMany({
    where: { ...where, ...keyset.where },
    orderBy: keyset.orderBy,
    take: query.limit + 1,
  });
  return toPage(rows, query.limit, createdAtKey);
}

/**
 * Hands the operator's decision to the claim's workflow and waits for its outcome: the
 * adjustment posted, the claim resolved, claim_resolved recorded. 409 claim_not_in_review when
 * the claim is not waiting for one; the service's refusal (e.g. insufficient_balance) as its own 409.
 */
export async function decideClaimAsOperator(
  db: Db,
  temporal: WorkflowEngine | undefined,
  claimId: string,
  decision: OperatorDecision,
): Promise<Claim> {
  if (!temporal) throw engineMissing();
  const claim = await findClaimAsOperator(db, claimId);
  if (claim.status !== 'needs_review') throw notInReview(claim);
  try {
    await temporal.client.workflow.getHandle(claim.workflowId).executeUpdate(resolveClaimUpdate, { args: [decision] });
  } catch (err) {
    throw await decisionError(db, claimId, err);
  }
  return findClaimAsOperator(db, claimId);
}

function notInReview(claim: Claim): ApiError {
  return errors.conflict(
    'claim_not_in_review',
    `Claim ${claim.id} is ${claim.status}; only claims in review are decided.`,
    {
      status: claim.status,
    },
  );
}

async function decisionError(db: Db, claimId: string, err: unknown): Promise<ApiError | unknown> {
  if (err instanceof WorkflowUpdateFailedError) {
    const cause = err.cause as { type?: string; details?: unknown[]; message?: string } | undefined;
    const refused =
      cause?.type === CLAIM_DECISION_REFUSED
        ? (cause.details?.[0] as { reasonCode?: string; details?: Record<string, unknown> })
        : undefined;
    if (refused)
      return errors.conflict(
        refused.reasonCode ?? 'claim_decision_refused',
        cause?.message ?? 'The decision was refused.',
        refused.details,
      );
    // The validator refused it: decided meanwhile, or another decision under way.
    return notInReview(await findClaimAsOperator(db, claimId));
  }
  if (err instanceof WorkflowNotFoundError) return notInReview(await findClaimAsOperator(db, claimId));
  if (classifyFailure(err) === 'workflow_engine_unavailable')
    return errors.unavailable('workflow_engine_unavailable', 'The workflow engine is unreachable; decide later.');
  return err;
}
