// Claims for the routes: filing one (its row, then its workflow), reading them, and handing an
// operator's decision to the claim's workflow as its `resolve` update. The deciding is the
// workflow's (workflows/claim-resolution.ts, activities/claims).
import { claimApprovalReason, type FourEyesReason } from '../../core/rules/four-eyes';
import { completedOf, reviewedProgress } from '../../core/rules/progress';
import { randomUUID } from 'node:crypto';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowUpdateFailedError,
  WorkflowNotFoundError,
} from '@temporalio/client';
import { errors, ApiError } from '../../core/errors';
import { newId } from '../../core/ids';
import { requestHash } from '../../core/idempotency';
import { classifyFailure } from '../../core/failures';
import { startClaimWorkflow } from '../../core/domain/run-starts';
import { CLAIM_DECISION_EXPIRED, CLAIM_DECISION_REFUSED } from '../../core/failure-types';
import type { OperatorChoice, OperatorDecision } from '../../core/rules/claims';
import type { WorkflowEngine } from '../../core/workflow-engine';
import type { Db } from '../../prisma/client';
import type { Claim, Prisma } from '../../prisma/generated/client';
import { claimWorkflowId, resolveClaimUpdate } from '../../workflows/claim-resolution-contract';
import { createdAtKey, createdAtKeyset, toPage } from '../pagination';
import { requireGroup, requireVisibleMerchant } from '../catalogue/scope';
import type { AdminClaimListQuery, ClaimInput, ClaimListQuery } from './schemas';

const engineMissing = () =>
  errors.unavailable('workflow_engine_unavailable', 'The workflow engine is not configured; file the claim later.');

/**
 * Writes the claim's row, then starts its workflow. With an Idempotency-Key the row keeps the key,
 * written in the same commit: the same request again answers that claim (and starts its workflow
 * if the process that wrote it died first), another request under the key is 409
 * idempotency_key_reused. Without the key stored with the claim, a retry after the API died
 * between the commit and the answer would file a second claim once the first was resolved.
 */
export async function fileClaim(
  db: Db,
  temporal: WorkflowEngine | undefined,
  caller: { issuerId: string; idempotencyKey?: string; now: Date },
  chgId: string,
  input: ClaimInput,
): Promise<Claim> {
  const { issuerId, idempotencyKey, now } = caller;
  await requireGroup(db, issuerId, chgId);
  const hash = requestHash({ query: { chgId }, body: input });
  const filed = idempotencyKey ? await claimFiledWithKey(db, issuerId, idempotencyKey, hash) : null;
  if (filed) return startedIfOpen(db, temporal, filed);
  if (input.merchantId) await requireVisibleMerchant(db, issuerId, input.merchantId);
  const transactionId = await claimedTransactionId(db, issuerId, chgId, input);
  if (!temporal) throw engineMissing();
  const id = newId('clm');
  const workflowId = claimWorkflowId(issuerId, id);
  const claim = await insertClaim(db, hash, {
    id,
    issuerId,
    chgId,
    transactionId,
    externalId: input.externalId ?? null,
    reason: input.reason,
    merchantId: input.merchantId ?? null,
    note: input.note ?? null,
    workflowId,
    idempotencyKey: idempotencyKey ?? null,
    requestHash: idempotencyKey ? hash : null,
    createdAt: now,
    updatedAt: now,
  });
  if (claim.id !== id) return startedIfOpen(db, temporal, claim);
  try {
    await startClaimWorkflow(temporal, claim);
  } catch (err) {
    // Started already, by the worker's watch for rows left without a run: it is under way.
    if (err instanceof WorkflowExecutionAlreadyStartedError) return claim;
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

/** The claim filed before under the key: the same request's, or 409 for another request's. */
async function claimFiledWithKey(db: Db, issuerId: string, key: string, hash: string): Promise<Claim | null> {
  const filed = await db.claim.findFirst({ where: { issuerId, idempotencyKey: key } });
  if (filed && filed.requestHash !== hash) throw errors.idempotencyKeyReused({ claimId: filed.id });
  return filed;
}

/** A claim answered again: its workflow started when the process that filed it died first. */
async function startedIfOpen(db: Db, temporal: WorkflowEngine | undefined, claim: Claim): Promise<Claim> {
  if (claim.status !== 'open' || !temporal) return claim;
  try {
    await startClaimWorkflow(temporal, claim);
  } catch (err) {
    // Under way already (its first request's start, or the worker's watch): the usual case.
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
  return (await db.claim.findUnique({ where: { id: claim.id } })) ?? claim;
}

/** The new claim, or the one a concurrent request under the same key filed first. */
async function insertClaim(db: Db, hash: string, data: Prisma.ClaimUncheckedCreateInput): Promise<Claim> {
  try {
    return await db.claim.create({ data });
  } catch (err) {
    if (classifyFailure(err) !== 'unique_violation') throw err;
    const filed = data.idempotencyKey ? await claimFiledWithKey(db, data.issuerId, data.idempotencyKey, hash) : null;
    if (filed) return filed;
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
 * How long an operator's decision waits for the claim's workflow to apply it. Past it, the
 * answer is 503 and the decision can no longer be applied: a worker that comes back later
 * refuses it (docs/decisions/0035-claim-decisions-answer-in-bounded-time.md). Long enough for a
 * busy worker to post an adjustment, short enough for an operator's client not to time out first.
 */
export const DECISION_WAIT_MS = 5_000;
// The workflow's answer may still be on its way at acceptBy; the final read waits for the
// database's clock to pass acceptBy whatever this process's clock says.
const ANSWER_MARGIN_MS = 500;
/** Bounds the final read's waits for the database's clock (each sleeps what is left of the wait). */
const MAX_CLOCK_WAITS = 20;

/**
 * Hands the operator's decision to the claim's workflow and waits, at most DECISION_WAIT_MS, for
 * its outcome: the adjustment posted, the claim resolved, claim_resolved recorded. 409
 * claim_not_in_review when the claim is not waiting for one or another decision resolved it
 * first; the service's refusal (e.g. branded_not_enabled) as its own 409; 503 with Retry-After
 * when no worker applied it in time, and then nothing was done.
 */
export async function decideClaimAsOperator(
  db: Db,
  temporal: WorkflowEngine | undefined,
  claimId: string,
  choice: OperatorChoice,
): Promise<Claim> {
  if (!temporal) throw engineMissing();
  const claim = await findClaimAsOperator(db, claimId);
  if (claim.status !== 'needs_review') throw notInReview(claim);
  const decisionId = randomUUID();
  const acceptBy = await databaseClockIn(db, DECISION_WAIT_MS);
  const decision: OperatorDecision = { ...choice, decisionId, acceptBy: acceptBy.toISOString() };
  try {
    await temporal.client.withAbortSignal(AbortSignal.timeout(DECISION_WAIT_MS + ANSWER_MARGIN_MS), () =>
      temporal.client.workflow
        .getHandle(claim.workflowId)
        .executeUpdate(resolveClaimUpdate, { args: [decision], updateId: decisionId }),
    );
    return await findClaimAsOperator(db, claimId);
  } catch (err) {
    const answer = await definiteAnswer(db, claimId, err);
    if (answer) throw answer;
  }
  // No answer from the workflow (no worker, a worker that died, Temporal unreachable, or our
  // wait ran out): the claim's row says what happened once no decision can be applied any more.
  return settledAfter(db, claimId, decisionId, acceptBy);
}

async function databaseClockIn(db: Db, ms: number): Promise<Date> {
  const [row] = await db.$queryRaw<
    { at: Date }[]
  >`SELECT clock_timestamp() + make_interval(secs => ${ms / 1000}) AS at`;
  return row.at;
}

/**
 * The claim as the decision left it, read under the claim's row lock once the database's clock
 * has passed acceptBy. resolveClaim checks the same clock under the same lock before it applies
 * anything, so from this read on the decision can never be applied: it either resolved the
 * claim already (its decisionId is recorded) or it never will.
 */
async function settledAfter(db: Db, claimId: string, decisionId: string, acceptBy: Date): Promise<Claim> {
  for (let wait = 0; wait < MAX_CLOCK_WAITS; wait++) {
    const read = await db.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT id FROM claim WHERE id = ${claimId} FOR UPDATE`;
      const [clock] = await tx.$queryRaw<{ left_ms: number }[]>`
        SELECT ceil(extract(epoch FROM (${acceptBy}::timestamptz - clock_timestamp())) * 1000)::int AS left_ms`;
      if (clock.left_ms >= 0) return { leftMs: clock.left_ms, claim: null };
      return { leftMs: 0, claim: await tx.claim.findUniqueOrThrow({ where: { id: claimId } }) };
    });
    if (read.claim) {
      if (read.claim.decisionId === decisionId) return read.claim;
      if (read.claim.status !== 'needs_review') throw notInReview(read.claim);
      throw nothingDone(read.claim);
    }
    await new Promise((resolve) => setTimeout(resolve, read.leftMs + 1));
  }
  throw new Error(`the database's clock did not pass ${acceptBy.toISOString()}`);
}

function nothingDone(claim: Claim): ApiError {
  return errors.unavailable(
    'workflow_engine_unavailable',
    `No worker applied the decision on claim ${claim.id} within ${DECISION_WAIT_MS / 1000} s; nothing was done and ` +
      'the claim is still in review. Retry later (the same Idempotency-Key may be sent again).',
    { status: claim.status },
  );
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

/**
 * The answer a failed update gives for sure, or undefined when it says nothing about whether
 * the decision will still be applied (a timeout, a lost connection: the update may have been
 * admitted and a worker may still run it).
 */
async function definiteAnswer(db: Db, claimId: string, err: unknown): Promise<ApiError | undefined> {
  if (err instanceof WorkflowUpdateFailedError) {
    const failure = typedFailure(err.cause);
    if (failure?.type === CLAIM_DECISION_REFUSED) {
      const refused = failure.details?.[0] as { reasonCode?: string; details?: Record<string, unknown> } | undefined;
      return errors.conflict(
        refused?.reasonCode ?? 'claim_decision_refused',
        failure.message ?? 'The decision was refused.',
        refused?.details,
      );
    }
    const claim = await findClaimAsOperator(db, claimId);
    if (failure?.type === CLAIM_DECISION_EXPIRED) return nothingDone(claim);
    // Another decision resolved it, or the validator refused it: decided meanwhile.
    return notInReview(claim);
  }
  if (err instanceof WorkflowNotFoundError) {
    // A claim in review without its run (a restore took it): the workers' watch starts one, so the
    // decision can be tried again then; nothing was done.
    const claim = await findClaimAsOperator(db, claimId);
    return claim.status === 'needs_review' ? nothingDone(claim) : notInReview(claim);
  }
  return undefined;
}

/** The first failure with a type in an update's cause chain: an activity's failure arrives wrapped in an ActivityFailure. */
function typedFailure(cause: unknown): { type: string; message?: string; details?: unknown[] } | undefined {
  let current = cause as { type?: unknown; message?: string; details?: unknown[]; cause?: unknown } | undefined;
  for (let depth = 0; current && depth < 8; depth++, current = current.cause as typeof current) {
    if (typeof current.type === 'string') return current as { type: string; message?: string; details?: unknown[] };
  }
  return undefined;
}

/**
 * Whether approving the claim needs a second operator (four eyes): more than its issuer's
 * approvalThresholdMinor, counting what the approval posts (core/rules/four-eyes.ts). A claim
 * missing or decided holds nothing: the decision itself answers 404 or 409.
 */
export async function claimApprovalHold(
  db: Db,
  claimId: string,
  amountMinor: number | undefined,
): Promise<FourEyesReason | undefined> {
  const claim = await db.claim.findUnique({
    where: { id: claimId },
    select: { status: true, issuerId: true, computedCashbackMinor: true, computedBrandedMinor: true, evidence: true },
  });
  if (!claim || claim.status !== 'needs_review') return undefined;
  const issuer = await db.issuer.findUniqueOrThrow({
    where: { id: claim.issuerId },
    select: { approvalThresholdMinor: true },
  });
  const completed = completedOf(reviewedProgress(claim.evidence));
  return claimApprovalReason(
    {
      computedMinor: Number(claim.computedCashbackMinor ?? 0n) + Number(claim.computedBrandedMinor ?? 0n),
      completionsMinor: completed.cashbackMinor + completed.brandedMinor,
      amountMinor,
    },
    Number(issuer.approvalThresholdMinor),
  );
}
