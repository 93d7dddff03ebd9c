// How a group's progress on a cumulative offer moves (API.md, Offer mechanics, Progress): a
// settled purchase adds its contribution to the measure and earns the completions it reaches; a
// refund lowers the purchase's contribution and takes back the completions the measure no longer
// reaches, the latest first. Pure: the settlement and refund steps read the stored progress under
// the group's locks and write what these return in the same transaction as the rewards, so the
// rewarded completions always equal min(maxRedemptions, completions(measure)).
import { assertMinor } from '../money';
import {
  completionRewardMinor,
  contributionOf,
  rewardedCompletions,
  type BalanceType,
  type CumulativeReward,
} from './reward-kinds';
import type { EarnOffer } from './eligibility';

export interface StoredProgress {
  measure: number;
  /** Completions whose reward stands. */
  rewarded: number;
}

export interface CumulativeTerms {
  offerId: string;
  reward: CumulativeReward;
  minSpendMinor: number;
  maxRedemptionsPerChg: number | null;
  /** Cap per transaction, applied to each completion's reward; null: none. */
  maxRewardMinor: number | null;
  /** What is left of the offer's budget for the purchase's period; null or absent: no budget. */
  budgetRemainingMinor?: number | null;
}

export interface Completion {
  /** 1 for the offer's first completion for the group. */
  completion: number;
  amountMinor: number;
  balanceType: BalanceType;
}

export interface ProgressStep {
  offerId: string;
  contribution: number;
  before: StoredProgress;
  after: StoredProgress;
  /** Completions this purchase earns (settlement) or takes back (refund, the latest first). */
  completions: Completion[];
  /** A settlement's: the offer's budget paid less than the completions' rewards. */
  cappedByBudget?: boolean;
}

/** A cumulative offer's terms as the earn rules hold it, its budget as the purchase's period stands. */
export function cumulativeTermsOf(offer: EarnOffer): CumulativeTerms {
  if (!offer.cumulative) throw new RangeError(`offer ${offer.id} is not cumulative`);
  return {
    offerId: offer.id,
    reward: offer.cumulative,
    minSpendMinor: offer.minSpendMinor,
    maxRedemptionsPerChg: offer.maxRedemptionsPerChg ?? null,
    maxRewardMinor: offer.maxRewardMinor,
    budgetRemainingMinor: offer.budget?.remainingMinor ?? null,
  };
}

const NONE: StoredProgress = { measure: 0, rewarded: 0 };

/** A settled purchase of `amountMinor` on an offer it qualified for: what it adds and earns. */
export function progressOnSettlement(
  terms: CumulativeTerms,
  amountMinor: number,
  stored: StoredProgress | undefined,
): ProgressStep {
  const before = stored ?? NONE;
  const contribution = contributionOf(terms.reward, amountMinor, terms.minSpendMinor);
  const measure = before.measure + contribution;
  const rewarded = Math.max(before.rewarded, rewardedCompletions(terms.reward, measure, terms.maxRedemptionsPerChg));
  const reward = Math.min(
    completionRewardMinor(terms.reward, amountMinor),
    terms.maxRewardMinor ?? Number.MAX_SAFE_INTEGER,
  );
  // A budget pays the completions in order as far as it reaches: one it cannot pay in full gets
  // what is left, and counts all the same (the group reached it; the merchant's money ran out).
  let budgetLeft = terms.budgetRemainingMinor ?? Number.MAX_SAFE_INTEGER;
  if (terms.budgetRemainingMinor != null) assertMinor(terms.budgetRemainingMinor, 'budgetRemainingMinor');
  let cappedByBudget = false;
  const completions: Completion[] = [];
  for (let k = before.rewarded + 1; k <= rewarded; k++) {
    const amountMinor = Math.min(reward, budgetLeft);
    cappedByBudget ||= amountMinor < reward;
    budgetLeft -= amountMinor;
    completions.push({ completion: k, amountMinor, balanceType: terms.reward.balanceType });
  }
  return { offerId: terms.offerId, contribution, before, after: { measure, rewarded }, completions, cappedByBudget };
}

/**
 * A refund that leaves the purchase at `netAmountMinor`: its contribution falls from
 * `contributed` to what the net amount gives, the measure with it, and the completions above what
 * the measure still reaches come back (their amounts are the ledger's: the caller reads them).
 */
export function progressOnRefund(
  terms: CumulativeTerms,
  p: { contributed: number; netAmountMinor: number; stored: StoredProgress },
): ProgressStep & { contributedAfter: number } {
  assertMinor(p.contributed, 'contributed');
  const contributedAfter = Math.min(p.contributed, contributionOf(terms.reward, p.netAmountMinor, terms.minSpendMinor));
  const drop = p.contributed - contributedAfter;
  if (drop > p.stored.measure)
    throw new RangeError(`the measure ${p.stored.measure} holds less than the ${drop} taken`);
  const measure = p.stored.measure - drop;
  const rewarded = Math.min(p.stored.rewarded, rewardedCompletions(terms.reward, measure, terms.maxRedemptionsPerChg));
  const completions: Completion[] = [];
  for (let k = p.stored.rewarded; k > rewarded; k--)
    completions.push({ completion: k, amountMinor: 0, balanceType: terms.reward.balanceType });
  return {
    offerId: terms.offerId,
    contribution: -drop,
    before: p.stored,
    after: { measure, rewarded },
    completions,
    contributedAfter,
  };
}

/** The progress a claim's review found missing, from its evidence (none when it found none). */
export function reviewedProgress(evidence: unknown): ProgressStep[] {
  const steps = (evidence as { progress?: unknown } | null)?.progress;
  return Array.isArray(steps) ? (steps as ProgressStep[]) : [];
}

/** What completions earned, by balance type (a settlement's webhook counts them with its own reward). */
export function completedOf(steps: readonly ProgressStep[]): { cashbackMinor: number; brandedMinor: number } {
  const all = steps.flatMap((s) => s.completions);
  const sum = (type: BalanceType) => all.filter((c) => c.balanceType === type).reduce((t, c) => t + c.amountMinor, 0);
  return { cashbackMinor: sum('cashback'), brandedMinor: sum('branded') };
}
