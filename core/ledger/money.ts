// Money at the ledger boundary is a `number` of minor units that must be a safe integer;
// the database stores BIGINT, which Prisma hands back as `bigint`. These helpers are the
// only crossing points, so a float or an out-of-range value can never slip through.
import { LedgerError, LEDGER_INVALID_INPUT, assert } from './errors';

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
  assert(
    n <= BigInt(Number.MAX_SAFE_INTEGER) && n >= BigInt(Number.MIN_SAFE_INTEGER),
    `amount ${n} exceeds the safe integer range`,
  );
  return Number(n);
}

/** Sums checked integers, asserting the total stays exact. */
export function sumMinor(values: readonly number[]): number {
  let total = 0;
  for (const v of values) {
    assert(Number.isSafeInteger(v), `not an integer amount: ${v}`);
    total += v;
    assert(Number.isSafeInteger(total), 'sum exceeds the safe integer range');
  }
  return total;
}
