// Timeouts and retry policies for each class of activity, in one place, every field
// spelled out and every retry bounded (STYLE.md, habit 3).
import type { ActivityOptions, LocalActivityOptions } from '@temporalio/workflow';
import { EVENT_NOT_FOUND, NON_RETRYABLE_POSTING_FAILURES } from '../core/failure-types';

/** Matching, eligibility and ledger postings: one database transaction each. */
export const postingOptions: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    // About 6 minutes of retries (the waits between the 12 attempts; each attempt's own time
    // comes on top): long enough to ride out a database fail-over, short enough that a real
    // fault reaches an operator (status `unknown`) the same hour. test/workflows/activity-options.test.ts
    // holds this figure and the runbook's to the policy.
    maximumAttempts: 12,
    nonRetryableErrorTypes: [...NON_RETRYABLE_POSTING_FAILURES],
  },
};

/**
 * The same steps run as local activities (the lifecycle's current shape; see
 * docs/decisions/0001-lean-transaction-pipeline.md):
 * one database transaction each, executed inside the workflow task that asked for it, so a
 * step costs one marker instead of a task round trip (and Temporal Cloud bills all markers
 * of one workflow task as one action). Retries that back off longer than 10 s wait on a
 * server timer rather than holding the workflow task open.
 */
export const postingLocalOptions: LocalActivityOptions = {
  startToCloseTimeout: postingOptions.startToCloseTimeout,
  retry: postingOptions.retry,
  localRetryThreshold: '10 seconds',
};

/** Recording an outcome (e.g. `unknown`) must eventually succeed, so it retries longer. */
export const bookkeepingOptions: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '5 minutes',
    maximumAttempts: 100,
    nonRetryableErrorTypes: [EVENT_NOT_FOUND],
  },
};

/** markUnknown as a local activity: the same long, bounded retries as bookkeepingOptions. */
export const bookkeepingLocalOptions: LocalActivityOptions = {
  startToCloseTimeout: bookkeepingOptions.startToCloseTimeout,
  retry: bookkeepingOptions.retry,
  localRetryThreshold: '10 seconds',
};

/**
 * One webhook HTTP attempt per activity execution: the retry schedule is the workflow's
 * durable timers (API.md, Webhooks), so the activity itself never retries. The request is
 * aborted at 10 s; the extra 5 s leave room to record the outcome.
 */
export const webhookAttemptOptions: ActivityOptions = {
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 1, maximumInterval: '1 second', maximumAttempts: 1 },
};

/**
 * The sweeper hands over events page by page, marking each page before the next and
 * heartbeating after it: a retry (or the next scheduled run) starts where this one stopped.
 * The activity stops itself after SWEEP_BUDGET_MS; the start-to-close time-out is the
 * backstop for a sweeper that hangs, the heartbeat time-out for one whose worker died.
 */
export const sweepOptions: ActivityOptions = {
  startToCloseTimeout: '3 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 3 },
};

/**
 * A statement run's chunk: one database transaction of three set-based statements over up to 200
 * merchants' receivables, whose transfers in a busy month number in the hundreds of thousands:
 * minutes, not seconds, are its bound. Retried as a posting is (a retry after a commit issues
 * nothing twice).
 */
export const billingOptions: ActivityOptions = {
  startToCloseTimeout: '5 minutes',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 12,
    nonRetryableErrorTypes: [...NON_RETRYABLE_POSTING_FAILURES],
  },
};
