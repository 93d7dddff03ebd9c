// Timeouts and retry policies for each class of activity, in one place, every field
// spelled out and every retry bounded (STYLE.md, habit 3).
import type { ActivityOptions } from '@temporalio/workflow';

/** Failure types that retrying cannot fix; activities throw them as non-retryable. */
export const NON_RETRYABLE = {
  // core/ledger/errors.ts: the same strings (workflow code cannot import it).
  ledgerIdempotencyConflict: 'LEDGER_IDEMPOTENCY_CONFLICT',
  ledgerInsufficientBalance: 'LEDGER_INSUFFICIENT_BALANCE',
  ledgerInvalidInput: 'LEDGER_INVALID_INPUT',
  ledgerGrantNotExpirable: 'LEDGER_GRANT_NOT_EXPIRABLE',
  eventNotFound: 'EVENT_NOT_FOUND',
  invariantBroken: 'INVARIANT_BROKEN',
} as const;

/** Matching, eligibility and ledger postings: one database transaction each. */
export const postingOptions: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    // About 8 minutes of retries: long enough to ride out a database fail-over, short
    // enough that a real fault reaches an operator (status `unknown`) the same hour.
    maximumAttempts: 12,
    nonRetryableErrorTypes: Object.values(NON_RETRYABLE),
  },
};

/** Recording an outcome (e.g. `unknown`) must eventually succeed, so it retries longer. */
export const bookkeepingOptions: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '5 minutes',
    maximumAttempts: 100,
    nonRetryableErrorTypes: [NON_RETRYABLE.eventNotFound],
  },
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

/** The sweeper hands over events in bulk and runs again a minute later anyway. */
export const sweepOptions: ActivityOptions = {
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 3 },
};
