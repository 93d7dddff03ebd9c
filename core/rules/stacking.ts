// How the offers of one merchant that qualify for one purchase combine (API.md, Offer mechanics,
// Stacking), by the merchant's policy: `best_of` (the offer giving the most), `priority` (the
// highest priority, ties to the most) or `stack` (every offer under its own caps, the sum capped
// at `stackCapBps` of the amount). Every candidate comes back with what it gives and why, so the
// match trace can say of each offer why it applied or not. Ties fall to the earliest start, then
// the offer id, so the same purchase always decides the same way.
import { assertMinor } from '../money';

export type StackingPolicy = { policy: 'best_of' } | { policy: 'priority' } | { policy: 'stack'; stackCapBps: number };

/** The policies a merchant can have: best_of and priority apply one offer to a purchase, stack several. */
export const MERCHANT_STACKING = ['best_of', 'priority', 'stack'] as const;
export type MerchantStacking = (typeof MERCHANT_STACKING)[number];

/** The merchant's policy as stored: `stack` with its cap (the database requires one with it). */
export function stackingPolicy(stacking: MerchantStacking, stackCapBps: number | null): StackingPolicy {
  if (stacking !== 'stack') return { policy: stacking };
  if (stackCapBps === null) throw new RangeError('stack needs a stackCapBps');
  return { policy: 'stack', stackCapBps };
}

export interface StackCandidate {
  offerId: string;
  /** What the offer alone gives the purchase, under its own caps. */
  rewardMinor: number;
  priority: number;
  startsAt: Date;
}

export type StackReason = 'applied' | 'lower_value' | 'lower_priority' | 'stack_cap';

export interface StackOutcome {
  offerId: string;
  appliedMinor: number;
  /** `stack_cap` also for an offer the cap cut short but did not leave at 0. */
  reason: StackReason;
}

const byValue = (a: StackCandidate, b: StackCandidate) =>
  b.rewardMinor - a.rewardMinor ||
  a.startsAt.getTime() - b.startsAt.getTime() ||
  (a.offerId < b.offerId ? -1 : a.offerId > b.offerId ? 1 : 0);
const byPriority = (a: StackCandidate, b: StackCandidate) => b.priority - a.priority || byValue(a, b);

export function stackOffers(
  candidates: readonly StackCandidate[],
  stacking: StackingPolicy,
  amountMinor: number,
): StackOutcome[] {
  assertMinor(amountMinor, 'amountMinor');
  for (const c of candidates) assertMinor(c.rewardMinor, `rewardMinor of ${c.offerId}`);
  if (stacking.policy === 'stack') return stack(candidates, stacking.stackCapBps, amountMinor);
  const ranked = [...candidates].sort(stacking.policy === 'priority' ? byPriority : byValue);
  return ranked.map((c, i) => {
    if (i === 0) return { offerId: c.offerId, appliedMinor: c.rewardMinor, reason: 'applied' };
    const outranked = stacking.policy === 'priority' && c.priority < ranked[0].priority;
    return { offerId: c.offerId, appliedMinor: 0, reason: outranked ? 'lower_priority' : 'lower_value' };
  });
}

function stack(candidates: readonly StackCandidate[], capBps: number, amountMinor: number): StackOutcome[] {
  if (!Number.isInteger(capBps) || capBps < 0 || capBps > 10_000)
    throw new RangeError(`stackCapBps ${capBps} is outside 0..10000`);
  let room = Number((BigInt(amountMinor) * BigInt(capBps)) / 10_000n);
  return [...candidates].sort(byPriority).map((c) => {
    const appliedMinor = Math.min(c.rewardMinor, room);
    room -= appliedMinor;
    return { offerId: c.offerId, appliedMinor, reason: appliedMinor < c.rewardMinor ? 'stack_cap' : 'applied' };
  });
}
