// Money is an integer number of minor units, never a float. The checks here are the only
// places amounts cross a boundary: into the reward rules, into the ledger, and out of the
// database (BIGINT arrives from Prisma as `bigint`), so a float or an out-of-range value
// fails where it enters instead of somewhere downstream.
import { LedgerError, LEDGER_INVALID_INPUT } from './ledger/errors';

/** Amounts reaching the rules must be safe, non-negative integers; anything else is a bug upstream. */
export function assertMinor(value: number, name: string): void {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new RangeError(`${name} must be a non-negative safe integer, got ${value}`);
}

/** Validates a caller-supplied positive amount (a business input, hence a typed error). */
export function requirePositiveMinor(value: number, field = 'amountMinor'): number {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new LedgerError(
      LEDGER_INVALID_INPUT,
      `${field} must be a positive safe integer of minor units, got ${value}`,
      { field, value },
    );
  }
  return value;
}

/** Converts a database BIGINT (or numeric driver value) to a checked `number`. */
export function fromDbMinor(value: bigint | number | string): number {
  const n = typeof value === 'bigint' ? value : BigInt(value);
  invariant(
    n <= BigInt(Number.MAX_SAFE_INTEGER) && n >= BigInt(Number.MIN_SAFE_INTEGER),
    `amount ${n} exceeds the safe integer range`,
  );
  return Number(n);
}

/** Sums checked integers, asserting the total stays exact. */
export function sumMinor(values: readonly number[]): number {
  let total = 0;
  for (const v of values) {
    invariant(Number.isSafeInteger(v), `not an integer amount: ${v}`);
    total += v;
    invariant(Number.isSafeInteger(total), 'sum exceeds the safe integer range');
  }
  return total;
}

/** A broken money invariant is a bug, never a business outcome. */
function invariant(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(`money invariant violated: ${message}`);
}

/** "$12.34" for 1234 minor units of usd: integer arithmetic, never a float. */
export function formatMinor(amountMinor: number): string {
  assertMinor(Math.abs(amountMinor), 'amountMinor');
  const sign = amountMinor < 0 ? '-' : '';
  const abs = Math.abs(amountMinor);
  return `${sign}$${Math.trunc(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}
