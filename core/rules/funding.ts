// Who funds a reward and what the merchant owes for it (API.md, "Funded offers"; DESIGN.md,
// Ledger). Pure integer arithmetic: the settlement posts the issuer's share of each reward and the
// merchant's commission; a refund gives both back in proportion to the refunded amount, computed on
// cumulative amounts (as the clawback is, core/rules/settlement.ts), so partial refunds never drift
// and a full refund returns exactly everything.
import { assertMinor } from '../money';
import { clawbackDue } from './settlement';

const BPS_DENOMINATOR = 10_000n;

export interface FundingTerms {
  /** The issuer's share of each reward; the merchant funds the rest. */
  issuerShareBps: number;
  /** Commission: this rate of the amount the reward was computed on, plus flatMinor, per qualifying purchase. */
  commissionRateBps: number;
  commissionFlatMinor: number;
}

export const NO_FUNDING_TERMS: FundingTerms = { issuerShareBps: 0, commissionRateBps: 0, commissionFlatMinor: 0 };

function ofRate(amountMinor: number, rateBps: number): number {
  assertMinor(amountMinor, 'amountMinor');
  if (!Number.isInteger(rateBps) || rateBps < 0 || rateBps > 10_000)
    throw new RangeError(`rate ${rateBps} bps is outside 0..10000`);
  // BigInt division truncates: floor for non-negative operands.
  return Number((BigInt(amountMinor) * BigInt(rateBps)) / BPS_DENOMINATOR);
}

/**
 * The issuer's share of one reward component: floor(reward x share / 10000). The merchant funds
 * the rest, so a rounding minor unit is the merchant's, and a share of 10000 is the whole reward.
 */
export function issuerShareOf(rewardMinor: number, issuerShareBps: number): number {
  const share = ofRate(rewardMinor, issuerShareBps);
  if (share > rewardMinor) throw new Error('the issuer share exceeds the reward');
  return share;
}

/**
 * The commission of a qualifying purchase: floor(rewarded-on amount x rate / 10000) + flat. The
 * rewarded-on amount is what the reward was computed on (the purchase less its branded spend).
 */
export function commissionOf(
  rewardedOnMinor: number,
  terms: Pick<FundingTerms, 'commissionRateBps' | 'commissionFlatMinor'>,
): number {
  assertMinor(terms.commissionFlatMinor, 'commissionFlatMinor');
  return ofRate(rewardedOnMinor, terms.commissionRateBps) + terms.commissionFlatMinor;
}

/**
 * What a refund returns of an amount charged with its purchase (the issuer's share, the
 * commission): in proportion to the refunded amount, on cumulative amounts, never more than was
 * charged; a full refund returns exactly what is left.
 */
export function returnDue(input: {
  chargedMinor: number;
  purchaseAmountMinor: number;
  refundedBeforeMinor: number;
  refundMinor: number;
  returnedBeforeMinor: number;
}): number {
  return clawbackDue({
    earnedMinor: input.chargedMinor,
    purchaseAmountMinor: input.purchaseAmountMinor,
    refundedBeforeMinor: input.refundedBeforeMinor,
    refundMinor: input.refundMinor,
    clawedBackBeforeMinor: input.returnedBeforeMinor,
  });
}
