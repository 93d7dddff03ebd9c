// Money is an integer number of minor units. Amounts that reach the rules must be safe,
// non-negative integers; anything else is a bug upstream and fails loudly here.
export function assertMinor(value: number, name: string): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative safe integer, got ${value}`);
}

/** A BIGINT column read as bigint, checked before it becomes a JSON number. */
export function minorFromBigInt(value: bigint): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new RangeError(`amount ${value} is beyond the safe integer range`);
  return n;
}
