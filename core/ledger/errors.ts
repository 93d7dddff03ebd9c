// Typed ledger failures. The `type` strings are stable (never class names, which bundling
// renames) so the workflow layer can list them as non-retryable Temporal failure types.

export const LEDGER_IDEMPOTENCY_CONFLICT = 'LEDGER_IDEMPOTENCY_CONFLICT';
export const LEDGER_INSUFFICIENT_BALANCE = 'LEDGER_INSUFFICIENT_BALANCE';
export const LEDGER_INVALID_INPUT = 'LEDGER_INVALID_INPUT';
export const LEDGER_GRANT_NOT_EXPIRABLE = 'LEDGER_GRANT_NOT_EXPIRABLE';

export type LedgerErrorType =
  | typeof LEDGER_IDEMPOTENCY_CONFLICT
  | typeof LEDGER_INSUFFICIENT_BALANCE
  | typeof LEDGER_INVALID_INPUT
  | typeof LEDGER_GRANT_NOT_EXPIRABLE;

/** Every ledger failure type; retrying any of them gives the same answer. */
export const NON_RETRYABLE_LEDGER_ERRORS: readonly LedgerErrorType[] = [
  LEDGER_IDEMPOTENCY_CONFLICT,
  LEDGER_INSUFFICIENT_BALANCE,
  LEDGER_INVALID_INPUT,
  LEDGER_GRANT_NOT_EXPIRABLE,
];

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
