// How the TransactionLifecycle runs one step (preview, void, lapse, settle, refund) and
// records its outcome. Since the lean-pipeline change a step is:
//   - one LOCAL activity (one database transaction: decide, post, write the webhook record
//     into the outbox); its marker is the whole Temporal cost of the posting;
//   - one search-attribute upsert with the outcome (status, merchant, and the transaction
//     ids when a new one joined the purchase), as the step's only other command.
// Webhooks are not the workflow's business any more: the worker's relay sends the first
// attempt from the outbox and starts a WebhookDelivery workflow only when it fails
// (worker/webhook-relay.ts). Runs that began before this change keep the v1 step shape
// (lifecycle-steps-v1.ts) until they finish; the workflow chooses by its input's `shape`.
import {
  ActivityFailure,
  ApplicationFailure,
  proxyLocalActivities,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { LifecycleActivities, StepOutcome } from '../activities/lifecycle/types';
import { bookkeepingLocalOptions, postingLocalOptions } from './activity-options';
import type { LifecycleSignalName } from './lifecycle-signals';
import { RewardsMerchantId, RewardsStatus, RewardsTransactionId } from './search-attributes';

export type PostingStep =
  'previewAuthorization' | 'voidPreview' | 'lapsePreview' | 'settleTransaction' | 'clawBackRefund';

export interface Pending {
  signal: LifecycleSignalName;
  eventId: string;
}

export interface LifecycleSummary {
  steps: Array<{ signal: LifecycleSignalName; eventId: string; status: string; webhookId?: string }>;
}

/** What the step runners of both shapes share over one run. */
export interface LifecycleRecord {
  summary: LifecycleSummary;
  /** Every event id the run has taken, in order. */
  transactionIds: string[];
  /** The ids the workflow's RewardsTransactionId holds now (set at start by the hand-over). */
  publishedIds: string[];
  /** A sandbox issuer's clock offset at the last step that reported one (the preview). */
  clockOffsetMs?: number;
}

export interface StepRunner {
  /** The loop took this event: it belongs to the purchase from now on. */
  take(eventId: string): void;
  /**
   * Runs the step's activity; a failure for good marks the event unknown. Returns the status.
   * With keepStatus the outcome is not published as the workflow's RewardsStatus (a late
   * authorization must not hide its settlement's outcome).
   */
  run(step: Pending, activity: PostingStep, options?: { keepStatus?: boolean }): Promise<string>;
  markUnknown(step: Pending, reason: string): Promise<void>;
}

const postings = proxyLocalActivities<LifecycleActivities>(postingLocalOptions);
const bookkeeping = proxyLocalActivities<Pick<LifecycleActivities, 'markUnknown'>>(bookkeepingLocalOptions);

export function newLifecycleRecord(): LifecycleRecord {
  return {
    summary: { steps: [] },
    transactionIds: [],
    publishedIds: [...(workflowInfo().typedSearchAttributes.get(RewardsTransactionId) ?? [])],
  };
}

export function leanSteps(record: LifecycleRecord): StepRunner {
  // One upsert per outcome, carrying the transaction ids only when one joined since the last.
  const publishOutcome = (status: string | undefined, merchantId?: string) => {
    const ids = [...record.publishedIds, ...record.transactionIds.filter((id) => !record.publishedIds.includes(id))];
    const newIds = ids.length > record.publishedIds.length;
    record.publishedIds = ids;
    const updates = [
      ...(status ? [{ key: RewardsStatus, value: status }] : []),
      ...(merchantId ? [{ key: RewardsMerchantId, value: merchantId }] : []),
      ...(newIds ? [{ key: RewardsTransactionId, value: ids }] : []),
    ];
    if (updates.length > 0) upsertSearchAttributes(updates);
  };

  const markUnknown = async (step: Pending, reason: string) => {
    await bookkeeping.markUnknown({ eventId: step.eventId, reason, workflowId: workflowInfo().workflowId });
    record.summary.steps.push({ ...step, status: 'unknown' });
    publishOutcome('unknown');
  };

  return {
    take(eventId) {
      if (!record.transactionIds.includes(eventId)) record.transactionIds.push(eventId);
    },
    async run(step, activity, options) {
      let outcome: StepOutcome;
      try {
        outcome = await postings[activity](stepInput(step));
      } catch (err) {
        const reason = stepFailure(err);
        if (reason === undefined) throw err;
        await markUnknown(step, reason);
        return 'unknown';
      }
      record.summary.steps.push({
        ...step,
        status: outcome.status,
        ...(outcome.webhookId ? { webhookId: outcome.webhookId } : {}),
      });
      if (outcome.clockOffsetMs !== undefined) record.clockOffsetMs = outcome.clockOffsetMs;
      if (options?.keepStatus) publishOutcome(undefined);
      else publishOutcome(outcome.status, outcome.merchantId);
      return outcome.status;
    },
    markUnknown,
  };
}

/**
 * Why a step's activity failed for good, or undefined when `err` is not an activity's failure.
 * A local activity's failure reaches the workflow as the activity's own ApplicationFailure
 * (non-retryable, or retries exhausted), not wrapped in an ActivityFailure as a regular
 * activity's is; nothing else in a step throws one.
 */
function stepFailure(err: unknown): string | undefined {
  if (err instanceof ActivityFailure) return err.cause?.message ?? err.message;
  if (err instanceof ApplicationFailure) return err.message;
  return undefined;
}

// Activities get the workflow's clock: it is the same on every retry of a step, and
// time-skipping tests move it (availability and expiry dates are computed from it).
export function stepInput(pending: Pending) {
  return { eventId: pending.eventId, atMs: Date.now() }; // workflow time
}
