// Reward arithmetic of one offer for one transaction (API.md, Reward rules):
// floor(amount x rate / 10000) per component, then the per-transaction cap and the
// per-group-and-offer cap on the total. Integers only: the product is taken in BigInt so
// neither overflow nor floating point can creep in.
import { assertMinor } from '../money';

export interface RewardTerms {
  cashbackRateBps: number;
  brandedRateBps: number;
  /** Cap per transaction; null means none. */
  maxRewardMinor: number | null;
  /** Cap per group and offer over all its transactions; null means none. */
  maxRewardPerChgMinor: number | null;
}

export interface OfferReward {
  cashbackMinor: number;
  brandedMinor: number;
  totalMinor: number;
  /** What the rates alone would give, before any cap. */
  uncappedMinor: number;
  /** The cap that bit, if one did: the offer's per-transaction or per-group cap, what is left of its
   *  budget, or the merchant's stack cap on the offers applied together. */
  cappedBy: 'transaction' | 'chg' | 'budget' | 'stack' | null;
}

const BPS_DENOMINATOR = 10_000n;

function component(amountMinor: number, rateBps: number): number {
  if (!Number.isInteger(rateBps) || rateBps < 0 || rateBps > 10_000)
    throw new RangeError(`rate ${rateBps} bps is outside 0..10000`);
  // BigInt division truncates, which is floor for non-negative operands.
  return Number((BigInt(amountMinor) * BigInt(rateBps)) / BPS_DENOMINATOR);
}

/**
 * `budgetRemainingMinor`: what is left of the offer's budget for the purchase's period (null: no
 * budget). It caps the reward like the other caps: a purchase at the edge gets what is left.
 */
export function computeOfferReward(
  offer: RewardTerms,
  eligibleAmountMinor: number,
  earnedSoFarForChgMinor: number,
  budgetRemainingMinor: number | null = null,
): OfferReward {
  assertMinor(eligibleAmountMinor, 'eligibleAmountMinor');
  assertMinor(earnedSoFarForChgMinor, 'earnedSoFarForChgMinor');
  const cashbackMinor = component(eligibleAmountMinor, offer.cashbackRateBps);
  const brandedMinor = component(eligibleAmountMinor, offer.brandedRateBps);
  const uncappedMinor = cashbackMinor + brandedMinor;

  let limit = uncappedMinor;
  let cappedBy: OfferReward['cappedBy'] = null;
  if (offer.maxRewardMinor !== null && offer.maxRewardMinor < limit) {
    assertMinor(offer.maxRewardMinor, 'maxRewardMinor');
    limit = offer.maxRewardMinor;
    cappedBy = 'transaction';
  }
  if (offer.maxRewardPerChgMinor !== null) {
    assertMinor(offer.maxRewardPerChgMinor, 'maxRewardPerChgMinor');
    const remaining = Math.max(0, offer.maxRewardPerChgMinor - earnedSoFarForChgMinor);
    if (remaining < limit) {
      limit = remaining;
      cappedBy = 'chg';
    }
  }
  if (budgetRemainingMinor !== null) {
    assertMinor(budgetRemainingMinor, 'budgetRemainingMinor');
    if (budgetRemainingMinor < limit) {
      limit = budgetRemainingMinor;
      cappedBy = 'budget';
    }
  }
  return trimmed({ cashbackMinor, brandedMinor, totalMinor: uncappedMinor, uncappedMinor, cappedBy }, limit);
}

/**
 * The reward cut to `limitMinor` in all (unchanged when it is within it). When a cap bites, the
 * branded component gives way first: cashback is the reward the cardholder can use anywhere and the
 * one the offer headline promises, while branded balance is restricted to one merchant, so trimming
 * it first keeps the most useful part.
 */
export function trimmed(reward: OfferReward, limitMinor: number, cappedBy = reward.cappedBy): OfferReward {
  assertMinor(limitMinor, 'limitMinor');
  const excess = Math.max(0, reward.totalMinor - limitMinor);
  if (excess === 0) return { ...reward };
  const brandedCut = Math.min(reward.brandedMinor, excess);
  const brandedMinor = reward.brandedMinor - brandedCut;
  const cashbackMinor = reward.cashbackMinor - (excess - brandedCut);
  assertMinor(cashbackMinor, 'cashbackMinor');
  return { ...reward, cashbackMinor, brandedMinor, totalMinor: cashbackMinor + brandedMinor, cappedBy };
}
