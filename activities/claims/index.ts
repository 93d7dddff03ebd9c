// The claim workflow's effects (workflows/claim-resolution.ts). Each runs in one database
// transaction under the claim's row lock and answers from the stored claim when it finds its
// work done, so a retry after a crash, or a worker killed mid-decision, ends with one outcome,
// one adjustment and one claim_resolved.
import { createHash } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import type { Claim, IngestedEvent } from '../../prisma/generated/client';
import { holdDays, payableAt } from '../../core/rules/cashback';
import { Prisma } from '../../prisma/generated/client';
import {
  decideClaim as decide,
  OPERATOR_APPROVED,
  type ClaimOutcome,
  type ClaimStatus,
  type OperatorDecision,
} from '../../core/rules/claims';

export type { ClaimOutcome, OperatorDecision };
import { BALANCE_TYPES, type BalanceType } from '../../core/rules/adjustments';
import { postAdjustment } from '../../core/domain/adjustments';
import { recordAudit } from '../../core/domain/audit';
import { inTransaction, type Tx } from '../../core/domain/ledger';
import { recordFactWebhooks } from '../../core/domain/webhook-records';
import { factKey } from '../../core/webhooks/fact-webhooks';
import { fromDbMinor } from '../../core/ledger';
import type { IngestedEvent as EventPayload } from '../../core/domain/events';
import { CLAIM_DECISION_EXPIRED, CLAIM_DECISION_REFUSED, CLAIM_NOT_FOUND } from '../../core/failure-types';
import { ApiError, errors } from '../../core/errors';
import type { Db } from '../../prisma/client';
import { findClaimedEvent, loadClaimFacts } from './facts';
import { learnMatchRule } from './learn';
import { countClaimedPurchase } from './progress';
import { completedOf, reviewedProgress } from '../../core/rules/progress';
import { issuerClockAt } from '../issuer-clock';
import type { LifecycleDeps } from '../lifecycle/deps';

export interface ClaimActivityDeps {
  db: Db;
  clock: { now(): Date };
  /** Fault injection for crash-safety tests (the lifecycle's hooks); never set in production. */
  faults?: LifecycleDeps['faults'];
}

const outcomeOf = (c: Claim): ClaimOutcome => ({
  claimId: c.id,
  status: c.status as ClaimStatus,
  reasonCode: c.reasonCode,
  adjustmentIds: c.adjustmentIds,
  decisionId: c.decisionId,
});

/**
 * Whether the database's clock has passed the decision's acceptBy. Asked under the claim's row
 * lock, on the clock the API also reads under that lock once it stops waiting: a decision that
 * finds the lock after the API has answered "nothing done" finds the instant passed too.
 */
async function tooLate(tx: Tx, op: OperatorDecision): Promise<boolean> {
  if (op.acceptBy === undefined) return false;
  const [row] = await tx.$queryRaw<{ late: boolean }[]>`SELECT clock_timestamp() > ${new Date(op.acceptBy)} AS late`;
  return row.late;
}

async function lockClaim(tx: Tx, claimId: string): Promise<Claim> {
  const [row] = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM claim WHERE id = ${claimId} FOR UPDATE`;
  // The API writes the claim before starting its workflow; a start whose commit failed leaves
  // a workflow without a claim, which ends here rather than retrying for nothing.
  if (!row) throw ApplicationFailure.nonRetryable(`No claim ${claimId}`, CLAIM_NOT_FOUND);
  return tx.claim.findUniqueOrThrow({ where: { id: claimId } });
}

export function createClaimActivities(deps: ClaimActivityDeps) {
  const { db, clock } = deps;
  return {
    /** Decides an open claim: rejects it with the proving reason, or sends it to review. */
    async decideClaim(input: { claimId: string }): Promise<ClaimOutcome> {
      const outcome = await inTransaction(db, async (tx) => {
        const claim = await lockClaim(tx, input.claimId);
        if (claim.status !== 'open') return outcomeOf(claim);
        const { facts, evidence } = await loadClaimFacts(tx, claim);
        const decision = decide(facts);
        const at = clock.now();
        // A claim in review keeps the progress it found missing: approval counts the purchase towards those offers.
        const evidenceJson = {
          ...evidence,
          detail: decision.detail,
          ...(decision.outcome === 'needs_review' ? { progress: decision.progress } : {}),
        } as unknown as Prisma.InputJsonValue;
        if (decision.outcome === 'needs_review') {
          const updated = await tx.claim.update({
            where: { id: claim.id },
            data: {
              status: 'needs_review',
              reasonCode: decision.reasonCode,
              evidence: evidenceJson,
              transactionId: claim.transactionId ?? evidence.transaction?.id ?? null,
              computedCashbackMinor: BigInt(decision.missing.cashbackMinor),
              computedBrandedMinor: BigInt(decision.missing.brandedMinor),
              updatedAt: at,
            },
          });
          return outcomeOf(updated);
        }
        const rejected = await tx.claim.update({
          where: { id: claim.id },
          data: {
            status: 'rejected',
            reasonCode: decision.reasonCode,
            evidence: evidenceJson,
            resolvedBy: 'service',
            resolvedAt: at,
            updatedAt: at,
          },
        });
        await announce(tx, rejected, at);
        return outcomeOf(rejected);
      });
      await deps.faults?.afterCommit?.('decideClaim', input.claimId);
      return outcome;
    },

    /**
     * Applies an operator's decision to a claim in review. A claim already resolved answers as it
     * stands (its decisionId says whether by this decision, retried after its commit); a decision
     * the API has stopped waiting for is refused, and does nothing.
     */
    async resolveClaim(input: { claimId: string; operator: OperatorDecision }): Promise<ClaimOutcome> {
      const outcome = await refusalsAsFailures(() =>
        inTransaction(db, async (tx) => {
          const claim = await lockClaim(tx, input.claimId);
          if (claim.status !== 'needs_review') return outcomeOf(claim);
          if (await tooLate(tx, input.operator))
            throw ApplicationFailure.nonRetryable(
              `the decision on ${claim.id} came after ${input.operator.acceptBy}, when its caller was answered that nothing was done`,
              CLAIM_DECISION_EXPIRED,
            );
          const at = clock.now();
          const op = input.operator;
          const resolved =
            op.decision === 'approve' ? await approve(tx, claim, op, at) : await reject(tx, claim, op, at);
          await announce(tx, resolved, at);
          return outcomeOf(resolved);
        }),
      );
      await deps.faults?.afterCommit?.('resolveClaim', input.claimId);
      return outcome;
    },
  };
}

/** An API error (a 4xx the ledger answers) is the operator's to fix, not a retry's: it fails the update at once. */
async function refusalsAsFailures<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ApiError && err.status < 500)
      throw ApplicationFailure.create({
        message: err.message,
        type: CLAIM_DECISION_REFUSED,
        nonRetryable: true,
        details: [err.toBody()],
      });
    throw err;
  }
}

async function approve(
  tx: Tx,
  claim: Claim,
  op: Extract<OperatorDecision, { decision: 'approve' }>,
  at: Date,
): Promise<Claim> {
  const event = await findClaimedEvent(tx, claim);
  const merchantId = claim.merchantId ?? event?.merchantId ?? null;
  // The purchase's row, locked as a refund locks it: the credit and a refund of the purchase are
  // posted one after the other, so each sees what the other took.
  const purchase = event?.kind === 'settled' ? await lockPurchase(tx, event.id) : null;
  const refunds = purchase ? await refundsSoFar(tx, purchase) : null;
  if (purchase && refunds && refunds.receivedMinor >= fromDbMinor(purchase.amountMinor))
    throw errors.conflict(
      'purchase_refunded',
      `The purchase of claim ${claim.id} has been refunded in full since the claim was reviewed: it keeps no reward. Reject the claim.`,
      { transactionId: purchase.id, refundedMinor: refunds.receivedMinor },
    );
  // Postings follow a sandbox issuer's clock, like its purchases' (activities/issuer-clock.ts).
  const issuerAt = await issuerClockAt(tx, claim.issuerId, at);
  // The cumulative offers first: they lock every account the claim's credit touches too.
  const reviewed = progressInReview(claim);
  const counted =
    purchase && refunds && merchantId
      ? await countClaimedPurchase(tx, {
          claimId: claim.id,
          purchase,
          merchantId,
          offerIds: reviewed.offerIds,
          netAmountMinor: fromDbMinor(purchase.amountMinor) - refunds.processedMinor,
          at: issuerAt,
        })
      : null;
  const adjustmentIds = await postCredits(tx, claim, op, {
    purchase,
    refunds,
    merchantId,
    amounts: creditAmounts(claim, op, reviewed.completedMinor, purchase, refunds),
    issuerAt,
    at,
  });
  let learned = null;
  if (op.learnDescriptor && event && merchantId)
    learned = await learnMatchRule(tx, {
      merchantId,
      payload: event.payload as EventPayload,
      claimId: claim.id,
      actor: op.actor,
      at,
    });
  await recordAudit(
    tx,
    {
      actor: op.actor,
      action: 'claim.approve',
      targetId: claim.id,
      details: { adjustmentIds, learned, completionEventIds: counted?.rewardEventIds ?? [] },
    },
    at,
  );
  return tx.claim.update({
    where: { id: claim.id },
    data: {
      status: 'approved',
      reasonCode: OPERATOR_APPROVED,
      decisionId: op.decisionId ?? null,
      adjustmentIds,
      resolutionNote: op.note ?? null,
      resolvedBy: op.actor,
      resolvedAt: at,
      updatedAt: at,
    },
  });
}

/**
 * The purchase's own reward to credit: what the review computed, less the completions it expected
 * (countClaimedPurchase posted those as the rules give them now), brought to the refunds since.
 * An operator's amount replaces it.
 */
function creditAmounts(
  claim: Claim,
  op: Extract<OperatorDecision, { decision: 'approve' }>,
  completedMinor: Record<BalanceType, number>,
  purchase: IngestedEvent | null,
  refunds: { processedMinor: number } | null,
): Array<[BalanceType, number]> {
  if (op.amountMinor !== undefined) return [[op.balanceType ?? 'cashback', op.amountMinor]];
  const own = (computed: bigint | null, type: BalanceType) =>
    sinceReview(claim, Math.max(0, fromDbMinor(computed ?? 0n) - completedMinor[type]), purchase, refunds);
  return [
    ['cashback', own(claim.computedCashbackMinor, 'cashback')],
    ['branded', own(claim.computedBrandedMinor, 'branded')],
  ];
}

/** The approval's missing_reward adjustments, funded by the issuer: ids of those posted. */
async function postCredits(
  tx: Tx,
  claim: Claim,
  op: Extract<OperatorDecision, { decision: 'approve' }>,
  p: {
    purchase: IngestedEvent | null;
    refunds: { processedMinor: number } | null;
    merchantId: string | null;
    amounts: Array<[BalanceType, number]>;
    issuerAt: Date;
    at: Date;
  },
): Promise<string[]> {
  const { purchase, refunds, merchantId } = p;
  const adjustmentIds: string[] = [];
  const holdUntil = purchase ? await purchaseHoldEnds(tx, purchase, claim) : undefined;
  for (const [balanceType, amountMinor] of p.amounts) {
    if (amountMinor === 0 || !BALANCE_TYPES.includes(balanceType)) continue;
    const { adjustment } = await postAdjustment(tx, {
      issuerId: claim.issuerId,
      chgId: claim.chgId,
      balanceType,
      amountMinor,
      ...(balanceType === 'branded' && merchantId ? { merchantId } : {}),
      reasonCode: 'missing_reward',
      ...(op.note ? { note: op.note } : {}),
      ...(claim.transactionId ? { transactionId: claim.transactionId } : {}),
      claimId: claim.id,
      // The purchase's own reward: held for its window, taken back by its later refunds.
      ...(purchase && refunds && amountMinor > 0
        ? { purchaseRefundedMinor: refunds.processedMinor, ...(holdUntil ? { holdUntil } : {}) }
        : {}),
      actor: op.actor,
      idempotencyKey: `claim:${claim.id}:${balanceType}`,
      at: p.issuerAt,
      recordedAt: p.at,
    });
    adjustmentIds.push(adjustment.id);
  }
  return adjustmentIds;
}

async function reject(
  tx: Tx,
  claim: Claim,
  op: Extract<OperatorDecision, { decision: 'reject' }>,
  at: Date,
): Promise<Claim> {
  await recordAudit(
    tx,
    {
      actor: op.actor,
      action: 'claim.reject',
      targetId: claim.id,
      // The note's digest, not the note: the trail is append-only, and a note the operator wrote
      // about a cardholder must go when their group is erased (the claim's own copy does).
      details: {
        reasonCode: op.reasonCode,
        noteSha256: op.note ? createHash('sha256').update(op.note).digest('hex') : null,
      },
    },
    at,
  );
  return tx.claim.update({
    where: { id: claim.id },
    data: {
      status: 'rejected',
      reasonCode: op.reasonCode,
      decisionId: op.decisionId ?? null,
      resolutionNote: op.note ?? null,
      resolvedBy: op.actor,
      resolvedAt: at,
      updatedAt: at,
    },
  });
}

async function lockPurchase(tx: Tx, eventId: string): Promise<IngestedEvent> {
  await tx.$queryRaw`SELECT id FROM ingested_event WHERE id = ${eventId} FOR UPDATE`;
  return tx.ingestedEvent.findUniqueOrThrow({ where: { id: eventId } });
}

/** The progress the review found missing (its evidence's): the offers, and what their completions paid. */
function progressInReview(claim: Claim): { offerIds: string[]; completedMinor: Record<BalanceType, number> } {
  const list = reviewedProgress(claim.evidence);
  const { cashbackMinor, brandedMinor } = completedOf(list);
  return { offerIds: list.map((s) => s.offerId), completedMinor: { cashback: cashbackMinor, branded: brandedMinor } };
}

/** What refunds took of the purchase: those whose clawback was processed, and every one received. */
async function refundsSoFar(
  tx: Tx,
  purchase: IngestedEvent,
): Promise<{ processedMinor: number; receivedMinor: number }> {
  const [row] = await tx.$queryRaw<{ processed: string; received: string }[]>`
    SELECT coalesce(sum(amount_minor) FILTER (WHERE processed_at IS NOT NULL), 0)::text AS processed,
           coalesce(sum(amount_minor), 0)::text AS received
      FROM ingested_event
     WHERE related_event_id = ${purchase.id} AND issuer_id = ${purchase.issuerId} AND kind = 'settled' AND state = 'refunded'
       AND currency = ${purchase.currency}`;
  return { processedMinor: fromDbMinor(row.processed), receivedMinor: fromDbMinor(row.received) };
}

/**
 * The reward computed at review, net of the refunds processed then, brought to the refunds
 * processed now: a refund between the review and the approval takes its share of it, as it would
 * have of an earned reward.
 */
function sinceReview(
  claim: Claim,
  computedMinor: number,
  purchase: IngestedEvent | null,
  refunds: { processedMinor: number } | null,
): number {
  if (!purchase || !refunds || computedMinor === 0) return computedMinor;
  const amountMinor = fromDbMinor(purchase.amountMinor);
  const atReview = (claim.evidence as { refundedMinor?: unknown } | null)?.refundedMinor;
  const reviewedMinor = typeof atReview === 'number' && Number.isSafeInteger(atReview) ? atReview : 0;
  if (refunds.processedMinor <= reviewedMinor || reviewedMinor >= amountMinor) return computedMinor;
  const left = Math.max(0, amountMinor - refunds.processedMinor);
  return Number((BigInt(computedMinor) * BigInt(left)) / BigInt(amountMinor - reviewedMinor));
}

/**
 * When the purchase's return window ends: its hold's, else the window its cashback would have
 * had (the offer the rules chose, else the issuer's), counted from its own date.
 */
async function purchaseHoldEnds(tx: Tx, purchase: IngestedEvent, claim: Claim): Promise<Date> {
  const hold = await tx.cashbackHold.findUnique({ where: { transactionId: purchase.id }, select: { payableAt: true } });
  if (hold) return hold.payableAt;
  const offerId =
    (claim.evidence as { rules?: { winningOfferId?: string | null } } | null)?.rules?.winningOfferId ?? null;
  const [row] = await tx.$queryRaw<{ issuer_days: number; offer_days: number | null }[]>`
    SELECT i.cashback_hold_days AS issuer_days,
           (SELECT o.return_period_days FROM offer o WHERE o.id = ${offerId}) AS offer_days
      FROM issuer i WHERE i.id = ${purchase.issuerId}`;
  return payableAt(purchase.eventCreatedAt, holdDays(row.offer_days, row.issuer_days));
}

/** claim_resolved, once per claim (its fact key), in the transaction that resolved it. */
async function announce(tx: Tx, claim: Claim, at: Date): Promise<void> {
  await recordFactWebhooks(tx, [
    {
      issuerId: claim.issuerId,
      type: 'claim_resolved',
      factKey: factKey.claimResolved(claim.id),
      sourceId: claim.id,
      data: {
        chgId: claim.chgId,
        claimId: claim.id,
        transactionId: claim.transactionId,
        outcome: claim.status === 'approved' ? 'approved' : 'rejected',
        reasonCode: claim.reasonCode ?? '',
        adjustmentId: claim.adjustmentIds[0] ?? null,
        adjustmentIds: claim.adjustmentIds,
      },
      at,
    },
  ]);
}

export type ClaimActivities = ReturnType<typeof createClaimActivities>;
