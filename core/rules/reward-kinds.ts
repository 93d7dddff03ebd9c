// The reward kinds of an offer (API.md, Offer mechanics), as plain arithmetic: which rates a
// tiered offer pays for an amount, how many completions a cumulative offer's measure reaches, what
// a group's progress shows, and how a change of the measure moves the rewards. A cumulative
// offer's measure is the group's net qualifying spend (spend X get Y, minor units) or its count of
// qualifying purchases (Nth purchase), after refunds, during the offer: the invariant is that its
// rewards are min(maxRedemptions, completions(measure)) of them, whatever the order of purchases
// and refunds, so the rewards to post or claw back after any event are the difference of two
// capped completion counts, never a running tally that could drift.
import { assertMinor } from '../money';

export type BalanceType = 'cashback' | 'branded';

export interface Tier {
  minSpendMinor: number;
  cashbackRateBps: number;
  brandedRateBps: number;
}

export interface SpendXGetY {
  kind: 'spend_x_get_y';
  spendMinor: number;
  rewardMinor: number;
  balanceType: BalanceType;
  repeatable: boolean;
}

/** The Nth qualifying purchase earns `rewardMinor`, or `rateBps` of its own amount. */
export interface NthPurchase {
  kind: 'nth_purchase';
  purchases: number;
  rewardMinor?: number;
  rateBps?: number;
  balanceType: BalanceType;
  repeatable: boolean;
}

export type CumulativeReward = SpendXGetY | NthPurchase;

export type RewardKind =
  | { kind: 'percent'; cashbackRateBps: number; brandedRateBps: number }
  | { kind: 'tiered'; tiers: Tier[] }
  | CumulativeReward;

export const isCumulative = (reward: RewardKind): reward is CumulativeReward =>
  reward.kind === 'spend_x_get_y' || reward.kind === 'nth_purchase';

/**
 * The rates one purchase of `amountMinor` earns at: a percent offer's own, a tiered offer's of the
 * highest minimum the amount reaches (none reached: null, the purchase earns nothing from it).
 */
export function ratesFor(
  reward: Extract<RewardKind, { kind: 'percent' | 'tiered' }>,
  amountMinor: number,
): { cashbackRateBps: number; brandedRateBps: number } | null {
  assertMinor(amountMinor, 'amountMinor');
  if (reward.kind === 'percent')
    return { cashbackRateBps: reward.cashbackRateBps, brandedRateBps: reward.brandedRateBps };
  const best = tierOf(reward.tiers, amountMinor);
  return best && { cashbackRateBps: best.cashbackRateBps, brandedRateBps: best.brandedRateBps };
}

/** The tier an amount reaches: the one with the highest minimum at or below it (none: null). */
export function tierOf(tiers: readonly Tier[], amountMinor: number): Tier | null {
  let best: Tier | null = null;
  for (const tier of tiers)
    if (tier.minSpendMinor <= amountMinor && (best === null || tier.minSpendMinor > best.minSpendMinor)) best = tier;
  return best;
}

/** What the offer row stores beside its flat rates: every kind but percent, whose rates are the flat ones. */
export type StoredReward = Exclude<RewardKind, { kind: 'percent' }>;

/** The least a purchase must reach for any tier to pay. */
export function lowestTierMinor(tiers: readonly Tier[]): number {
  if (tiers.length === 0) throw new RangeError('a tiered offer has at least one tier');
  return Math.min(...tiers.map((t) => t.minSpendMinor));
}

/**
 * A tiered offer's headline: the highest rate each component reaches in any tier. The offer's flat
 * fields carry it, so a reader of the flat fields alone (a filter by reward type, an older client)
 * sees what the offer pays at best, never more.
 */
export function headlineRates(tiers: readonly Tier[]): { cashbackRateBps: number; brandedRateBps: number } {
  return {
    cashbackRateBps: Math.max(0, ...tiers.map((t) => t.cashbackRateBps)),
    brandedRateBps: Math.max(0, ...tiers.map((t) => t.brandedRateBps)),
  };
}

/** What one completion takes: X minor units of spend, or N purchases. */
export const targetOf = (reward: CumulativeReward): number =>
  reward.kind === 'spend_x_get_y' ? reward.spendMinor : reward.purchases;

/** Completions the measure reaches, before the redemption limit. */
export function completionsOf(reward: CumulativeReward, measure: number): number {
  assertMinor(measure, 'measure');
  const target = targetOf(reward);
  if (!Number.isSafeInteger(target) || target < 1) throw new RangeError(`target ${target} must be a positive integer`);
  const reached = Math.floor(measure / target);
  return reward.repeatable ? reached : Math.min(reached, 1);
}

/** Completions that earn a reward: those the measure reaches, up to the group's redemption limit. */
export function rewardedCompletions(reward: CumulativeReward, measure: number, maxRedemptions: number | null): number {
  const reached = completionsOf(reward, measure);
  return maxRedemptions === null ? reached : Math.min(reached, maxRedemptions);
}

/**
 * How the rewarded completions move when the measure goes from `before` to `after`: positive,
 * that many rewards to post (each completing purchase's own); negative, that many to claw back,
 * the latest first.
 */
export function completionDelta(
  reward: CumulativeReward,
  before: number,
  after: number,
  maxRedemptions: number | null,
): number {
  return rewardedCompletions(reward, after, maxRedemptions) - rewardedCompletions(reward, before, maxRedemptions);
}

export interface Progress {
  /** Towards the next completion; the target itself once no further completion can be earned. */
  current: number;
  target: number;
  /** Completions that earned a reward. */
  completions: number;
}

/** A group's progress on a cumulative offer, as its offers list shows it. */
export function progressOf(reward: CumulativeReward, measure: number, maxRedemptions: number | null): Progress {
  const target = targetOf(reward);
  const completions = rewardedCompletions(reward, measure, maxRedemptions);
  const more = reward.repeatable ? maxRedemptions === null || completions < maxRedemptions : completions === 0;
  return { current: more ? measure - completions * target : target, target, completions };
}

/** The reward of one completion of a fixed-reward offer, or of an Nth purchase of `amountMinor` at its rate. */
export function completionRewardMinor(reward: CumulativeReward, amountMinor: number): number {
  assertMinor(amountMinor, 'amountMinor');
  if (reward.kind === 'spend_x_get_y') return reward.rewardMinor;
  if (reward.rewardMinor !== undefined) return reward.rewardMinor;
  const rate = reward.rateBps ?? 0;
  if (!Number.isInteger(rate) || rate < 0 || rate > 10_000)
    throw new RangeError(`rate ${rate} bps is outside 0..10000`);
  return Number((BigInt(amountMinor) * BigInt(rate)) / 10_000n);
}

/**
 * What one purchase adds to a cumulative offer's measure at its net amount (after its refunds so
 * far): the net amount itself (spend X get Y) or 1 (Nth purchase) while the net amount reaches the
 * offer's minimum spend and is above 0; nothing below it.
 */
export function contributionOf(reward: CumulativeReward, netAmountMinor: number, minSpendMinor: number): number {
  assertMinor(netAmountMinor, 'netAmountMinor');
  assertMinor(minSpendMinor, 'minSpendMinor');
  if (netAmountMinor <= 0 || netAmountMinor < minSpendMinor) return 0;
  return reward.kind === 'spend_x_get_y' ? netAmountMinor : 1;
}
