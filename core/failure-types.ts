// The type strings of the failures that cross the line between activities and workflows, in
// ONE module that both sides import: activities throw them (ApplicationFailure.nonRetryable,
// LedgerError), workflows list them as non-retryable and may throw their own. Stable strings,
// never class names, which bundling renames (STYLE.md, habit 4).
//
// Workflow code imports this file (test/workflows/boundary.test.ts allows exactly this core
// module), so it must stay a leaf: constants and types only, no imports, no effects.

/** Ledger failures (core/ledger/errors.ts): retrying any of them gives the same answer. */
export const LEDGER_IDEMPOTENCY_CONFLICT = 'LEDGER_IDEMPOTENCY_CONFLICT';
export const LEDGER_INSUFFICIENT_BALANCE = 'LEDGER_INSUFFICIENT_BALANCE';
export const LEDGER_INVALID_INPUT = 'LEDGER_INVALID_INPUT';
export const LEDGER_GRANT_NOT_EXPIRABLE = 'LEDGER_GRANT_NOT_EXPIRABLE';

export type LedgerFailureType =
  | typeof LEDGER_IDEMPOTENCY_CONFLICT
  | typeof LEDGER_INSUFFICIENT_BALANCE
  | typeof LEDGER_INVALID_INPUT
  | typeof LEDGER_GRANT_NOT_EXPIRABLE;

export const LEDGER_FAILURE_TYPES: readonly LedgerFailureType[] = [
  LEDGER_IDEMPOTENCY_CONFLICT,
  LEDGER_INSUFFICIENT_BALANCE,
  LEDGER_INVALID_INPUT,
  LEDGER_GRANT_NOT_EXPIRABLE,
];

/** A lifecycle step was asked about an event that is not stored (activities/lifecycle/context.ts). */
export const EVENT_NOT_FOUND = 'EVENT_NOT_FOUND';
/** A stored row breaks a rule the code relies on: a bug or a bad manual edit, not a business outcome. */
export const INVARIANT_BROKEN = 'INVARIANT_BROKEN';
/** A claim workflow started for a claim that is not stored (activities/claims). */
export const CLAIM_NOT_FOUND = 'CLAIM_NOT_FOUND';
/** An operator's decision on a claim the service refuses (e.g. a balance the merchant cannot hold): the claim stays in review. */
export const CLAIM_DECISION_REFUSED = 'CLAIM_DECISION_REFUSED';
/** A payout run started for a payout that is not stored, or no longer processing (activities/payouts). */
export const PAYOUT_NOT_PROCESSING = 'PAYOUT_NOT_PROCESSING';
/** A statement run started for a run that is not stored, or no longer processing (activities/statements). */
export const STATEMENT_RUN_NOT_PROCESSING = 'STATEMENT_RUN_NOT_PROCESSING';
/** An enrolment run started for a run that is not stored, or no longer processing (activities/enrolment). */
export const ENROLMENT_RUN_NOT_PROCESSING = 'ENROLMENT_RUN_NOT_PROCESSING';
/** An operator's decision on a claim that another decision resolved first: it answers 409 claim_not_in_review. */
export const CLAIM_NOT_IN_REVIEW = 'CLAIM_NOT_IN_REVIEW';
/** An operator's decision that reached the claim after the API stopped waiting for it: nothing is done. */
export const CLAIM_DECISION_EXPIRED = 'CLAIM_DECISION_EXPIRED';
/** A WebhookDelivery run started with a schedule or resume point out of bounds (workflows/webhook-delivery.ts). */
export const INVALID_WEBHOOK_SCHEDULE = 'INVALID_WEBHOOK_SCHEDULE';

/**
 * What no retry of a posting step can fix: the ledger's own failures, a missing event and a
 * broken invariant. The order is the one the retry policies always had.
 */
export const NON_RETRYABLE_POSTING_FAILURES: readonly string[] = [
  ...LEDGER_FAILURE_TYPES,
  EVENT_NOT_FOUND,
  INVARIANT_BROKEN,
];
