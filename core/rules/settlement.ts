// What a settled purchase earns and spends (API.md, Reward rules), decided once from the
// earn and spend decisions. Branded balance is spent first (at the same merchant, when the
// purchase reaches the merchant's spend minimum: min(available, amount)); earn then applies
// to the amount left after spend. The offer still qualifies on the full purchase amount —
// the cardholder made a qualifying purchase, however it was paid.
import { computeOfferReward, trimmed, type OfferReward } from './reward';
import { combineOffers, termsAt, type EarnDecision, type EarnOffer } from './eligibility';
import type { StackingPolicy, StackOutcome } from './stacking';
import type { SpendDecision } from './spend-eligibility';
import { assertMinor } from '../money';

/** One offer's reward the purchase earns, as the merchant's stacking applied it. */
export interface AppliedReward {
  offerId: string;
  reward: OfferReward;
}

export interface SettlementDecision {
  spentMinor: number;
  eligibleAmountMinor: number;
  /** The offer applied first (under best_of and priority, the only one); null when nothing is earned. */
  winningOfferId: string | null;
  /** The first-ranked offer's reward, even at 0 (its caps say why). */
  reward: OfferReward | null;
  /** Every offer that gives the purchase something, in the order the policy ranked them: one,
   *  except under `stack`. Their sums are cashbackMinor and brandedMinor. */
  applied: AppliedReward[];
  cashbackMinor: number;
  brandedMinor: number;
  /** Each qualifying offer, what it would give the purchase and why it applied or not. */
  stacking: StackOutcome[];
}

export function decideSettlement(input: {
  amountMinor: number;
  earn: EarnDecision | null;
  spend: SpendDecision | null;
  offers: EarnOffer[];
  earnedSoFarByOffer: Record<string, number>;
  /** The merchant's (absent: best_of). */
  stacking?: StackingPolicy;
}): SettlementDecision {
  assertMinor(input.amountMinor, 'amountMinor');
  const spentMinor = input.spend?.eligible ? Math.min(input.spend.availableBalanceMinor, input.amountMinor) : 0;
  const eligibleAmountMinor = input.amountMinor - spentMinor;
  const stacking = input.stacking ?? { policy: 'best_of' };
  // A cumulative offer rewards completions (core/rules/progress.ts), never the purchase itself.
  const qualifying = input.offers
    .filter((offer) => !offer.cumulative && input.earn?.eligibleOfferIds.includes(offer.id))
    .map((offer) => ({
      offerId: offer.id,
      // Eligible means the purchase reached the offer's minimum, so a tiered offer has its tier.
      reward: computeOfferReward(
        termsAt(offer, input.amountMinor)!,
        eligibleAmountMinor,
        input.earnedSoFarByOffer[offer.id] ?? 0,
        offer.budget?.remainingMinor ?? null,
      ),
    }));
  const outcomes = qualifying.length > 0 ? combineOffers(qualifying, input.offers, stacking, eligibleAmountMinor) : [];
  // What each offer gives once stacked: the stack cap cuts an offer short as any cap does, branded first.
  const applied = outcomes
    .filter((o) => o.appliedMinor > 0)
    .map((o) => {
      const reward = qualifying.find((q) => q.offerId === o.offerId)!.reward;
      return {
        offerId: o.offerId,
        reward: o.reason === 'stack_cap' ? trimmed(reward, o.appliedMinor, 'stack') : reward,
      };
    });
  const first = outcomes.length > 0 ? qualifying.find((q) => q.offerId === outcomes[0].offerId)! : null;
  const decision: SettlementDecision = {
    spentMinor,
    eligibleAmountMinor,
    winningOfferId: applied[0]?.offerId ?? null,
    reward: applied[0]?.reward ?? first?.reward ?? null,
    applied,
    cashbackMinor: applied.reduce((sum, a) => sum + a.reward.cashbackMinor, 0),
    brandedMinor: applied.reduce((sum, a) => sum + a.reward.brandedMinor, 0),
    stacking: outcomes,
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

/**
 * A credit an approved claim gave a purchase (API.md, Claims): the purchase's own reward, posted
 * when refunds had already taken `purchaseRefundedMinor` of it, so it was for the rest.
 */
export interface ClaimCredit {
  amountMinor: number;
  purchaseRefundedMinor: number;
}

/**
 * What refunds adding up to `refundedMinor` take back of a claim's credit, in all: the credit's
 * share of the part of the purchase refunded since it was posted. Cumulative, as clawbackDue is,
 * so each refund takes this less what the refunds before it took, and the refund that completes
 * the purchase takes the rest of the credit. A credit posted before any refund reads exactly as
 * the settlement's own earn does.
 */
export function claimCreditClawedBack(
  credit: ClaimCredit,
  input: { purchaseAmountMinor: number; refundedMinor: number },
): number {
  assertMinor(credit.amountMinor, 'amountMinor');
  assertMinor(credit.purchaseRefundedMinor, 'purchaseRefundedMinor');
  assertMinor(input.refundedMinor, 'refundedMinor');
  if (input.purchaseAmountMinor <= 0) throw new RangeError('purchaseAmountMinor must be positive');
  const base = input.purchaseAmountMinor - credit.purchaseRefundedMinor;
  // Claims refuse a purchase refunded in full, so nothing of such a credit ever stood.
  if (base <= 0) return credit.amountMinor;
  const refundedSince = Math.max(
    0,
    Math.min(input.purchaseAmountMinor, input.refundedMinor) - credit.purchaseRefundedMinor,
  );
  return Number((BigInt(credit.amountMinor) * BigInt(refundedSince)) / BigInt(base));
}

/** What this refund takes back of the claims' credits: their total at the refunds after it less before it. */
export function claimCreditsDue(
  credits: readonly ClaimCredit[],
  input: { purchaseAmountMinor: number; refundedBeforeMinor: number; refundMinor: number },
): number {
  const at = (refundedMinor: number) =>
    credits.reduce(
      (sum, c) => sum + claimCreditClawedBack(c, { purchaseAmountMinor: input.purchaseAmountMinor, refundedMinor }),
      0,
    );
  return Math.max(0, at(input.refundedBeforeMinor + input.refundMinor) - at(input.refundedBeforeMinor));
}

/**
 * What an approved claim credits now for a reward `computedMinor` the rules give on the whole
 * purchase: the part the purchase's refunds so far would have taken back of it, had the
 * settlement earned it, is left out (the same floor as clawbackDue).
 */
export function netOfRefunds(
  computedMinor: number,
  input: { purchaseAmountMinor: number; refundedMinor: number },
): number {
  assertMinor(computedMinor, 'computedMinor');
  assertMinor(input.refundedMinor, 'refundedMinor');
  if (input.purchaseAmountMinor <= 0) throw new RangeError('purchaseAmountMinor must be positive');
  const refunded = Math.min(input.purchaseAmountMinor, input.refundedMinor);
  return computedMinor - Number((BigInt(computedMinor) * BigInt(refunded)) / BigInt(input.purchaseAmountMinor));
}
