// What a settled purchase earns and spends (API.md, Reward rules), decided once from the
// earn and spend decisions. Branded balance is spent first (at the same merchant, when the
// purchase reaches the merchant's spend minimum: min(available, amount)); earn then applies
// to the amount left after spend. The offer still qualifies on the full purchase amount —
// the cardholder made a qualifying purchase, however it was paid.
import { computeOfferReward, type OfferReward } from './reward';
import type { EarnDecision, EarnOffer } from './eligibility';
import type { SpendDecision } from './spend-eligibility';
import { assertMinor } from '../money';

export interface SettlementDecision {
  spentMinor: number;
  eligibleAmountMinor: number;
  winningOfferId: string | null;
  reward: OfferReward | null;
  cashbackMinor: number;
  brandedMinor: number;
}

export function decideSettlement(input: {
  amountMinor: number;
  earn: EarnDecision | null;
  spend: SpendDecision | null;
  offers: EarnOffer[];
  earnedSoFarByOffer: Record<string, number>;
}): SettlementDecision {
  assertMinor(input.amountMinor, 'amountMinor');
  const spentMinor = input.spend?.eligible ? Math.min(input.spend.availableBalanceMinor, input.amountMinor) : 0;
  const eligibleAmountMinor = input.amountMinor - spentMinor;
  let best: { offerId: string; reward: OfferReward } | null = null;
  // Offers come ordered by start then id, so on equal rewards the earliest wins.
  for (const offer of input.offers) {
    if (!input.earn?.eligibleOfferIds.includes(offer.id)) continue;
    const reward = computeOfferReward(
      offer,
      eligibleAmountMinor,
      input.earnedSoFarByOffer[offer.id] ?? 0,
      offer.budget?.remainingMinor ?? null,
    );
    if (!best || reward.totalMinor > best.reward.totalMinor) best = { offerId: offer.id, reward };
  }
  const decision: SettlementDecision = {
    spentMinor,
    eligibleAmountMinor,
    winningOfferId: best && best.reward.totalMinor > 0 ? best.offerId : null,
    reward: best?.reward ?? null,
    cashbackMinor: best?.reward.cashbackMinor ?? 0,
    brandedMinor: best?.reward.brandedMinor ?? 0,
  };
  if (decision.spentMinor + decision.eligibleAmountMinor !== input.amountMinor)
    throw new Error('spend and earn do not add up');
  return decision;
}

/**
 * How much of what a purchase earned a refund claws back: in proportion to the refunded
 * amount, computed on the cumulative refunded amount so that rounding never drifts and a
 * full refund takes back exactly everything; never more than was earned.
 */
export function clawbackDue(input: {
  earnedMinor: number;
  purchaseAmountMinor: number;
  refundedBeforeMinor: number;
  refundMinor: number;
  clawedBackBeforeMinor: number;
}): number {
  for (const [name, value] of Object.entries(input)) assertMinor(value, name);
  if (input.purchaseAmountMinor <= 0) throw new RangeError('purchaseAmountMinor must be positive');
  const refundedTotal = Math.min(input.purchaseAmountMinor, input.refundedBeforeMinor + input.refundMinor);
  const target = Number((BigInt(input.earnedMinor) * BigInt(refundedTotal)) / BigInt(input.purchaseAmountMinor));
  return Math.max(0, Math.min(target, input.earnedMinor) - input.clawedBackBeforeMinor);
}
