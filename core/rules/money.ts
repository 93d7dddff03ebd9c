// Money is an integer number of minor units. Amounts that reach the rules must be safe,
// non-negative integers; anything else is a bug upstream and fails loudly here.
export function assertMinor(value: number, name: string): void {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new RangeError(`${name} must be a non-negative safe integer, got ${value}`);
}

// Reading BIGINT columns into numbers: fromDbMinor in core/ledger/money.ts, the one crossing point.
