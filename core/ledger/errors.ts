// Typed ledger failures. Their `type` strings live in core/failure-types.ts, which the
// workflows import too, so the non-retryable lists name exactly what is thrown here.

import { LEDGER_FAILURE_TYPES, type LedgerFailureType } from '../failure-types';

export {
  LEDGER_IDEMPOTENCY_CONFLICT,
  LEDGER_INSUFFICIENT_BALANCE,
  LEDGER_INVALID_INPUT,
  LEDGER_GRANT_NOT_EXPIRABLE,
} from '../failure-types';

export type LedgerErrorType = LedgerFailureType;

/** Every ledger failure type; retrying any of them gives the same answer. */
export const NON_RETRYABLE_LEDGER_ERRORS: readonly LedgerErrorType[] = LEDGER_FAILURE_TYPES;

export class LedgerError extends Error {
  readonly type: LedgerErrorType;
  readonly details: Record<string, unknown>;

  constructor(type: LedgerErrorType, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'LedgerError';
    this.type = type;
    this.details = details;
  }
}

export function isLedgerError(err: unknown, type?: LedgerErrorType): err is LedgerError {
  return err instanceof LedgerError && (type === undefined || err.type === type);
}

/** Programmer errors: a broken invariant is a bug, never a business outcome. */
export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(`ledger invariant violated: ${message}`);
}
