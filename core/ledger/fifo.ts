// How a draw splits across grants. Pure so the arithmetic is tested without a database;
// the activity picks and locks the candidate grants, in FIFO order, and applies this.
import { assert } from './errors';

export interface DrawCandidate {
  grantId: string;
  remainingMinor: number;
}

export interface Allocation {
  grantId: string;
  amountMinor: number;
}

/** Takes up to `amountMinor` from the candidates in the given order, never more than each holds. */
export function allocateDraw(candidates: readonly DrawCandidate[], amountMinor: number): Allocation[] {
  assert(
    Number.isSafeInteger(amountMinor) && amountMinor >= 0,
    `draw amount must be a non-negative integer, got ${amountMinor}`,
  );
  const allocations: Allocation[] = [];
  let left = amountMinor;
  for (const c of candidates) {
    if (left === 0) break;
    assert(
      Number.isSafeInteger(c.remainingMinor) && c.remainingMinor >= 0,
      `grant ${c.grantId} has remaining ${c.remainingMinor}`,
    );
    const take = Math.min(left, c.remainingMinor);
    if (take > 0) allocations.push({ grantId: c.grantId, amountMinor: take });
    left -= take;
  }
  const drawn = allocations.reduce((s, a) => s + a.amountMinor, 0);
  assert(drawn + left === amountMinor && left >= 0, 'allocation arithmetic');
  return allocations;
}

/** FIFO order for draws: the grant expiring first is used first (API.md, Reward rules). */
export interface FifoKey {
  expiresAt: Date;
  createdAt: Date;
  id: string;
}

export function compareFifo(a: FifoKey, b: FifoKey): number {
  return (
    a.expiresAt.getTime() - b.expiresAt.getTime() ||
    a.createdAt.getTime() - b.createdAt.getTime() ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}
