// Deciding a cardholder's claim (API.md, Claims): from the stored transaction, its match trace
// and the reward rules evaluated at the purchase's time. Pure: the claim workflow's activity
// gathers the facts, this decides, and the decision names the evidence that proves it.
import { EARN_REASONS, type EarnDecision, type EarnReason } from './eligibility';
import type { BalanceType } from './adjustments';
import { netOfRefunds } from './settlement';
import { trimmed, type OfferReward } from './reward';
import {
  completedOf,
  progressOnSettlement,
  type CumulativeTerms,
  type ProgressStep,
  type StoredProgress,
} from './progress';

export const CLAIM_REASONS = ['missing_reward', 'wrong_amount'] as const;
export type ClaimReason = (typeof CLAIM_REASONS)[number];
export const CLAIM_STATUSES = ['open', 'needs_review', 'approved', 'rejected'] as const;
export type ClaimStatus = (typeof CLAIM_STATUSES)[number];

/** Why a claim is rejected without an operator: each is proven by the evidence it names. */
export const AUTOMATIC_REJECTIONS = [
  'transaction_not_received',
  'reward_pending',
  'not_a_purchase',
  'currency_not_supported',
  'merchant_not_identified',
  'purchase_refunded',
  'already_rewarded',
  ...EARN_REASONS,
] as const;
/** What an operator may give as the reason of a rejection. */
export const OPERATOR_REJECTIONS = [
  'not_eligible',
  'duplicate',
  'fraud_suspected',
  'insufficient_evidence',
  'other',
] as const;
export const CLAIM_REJECTION_CODES = [...AUTOMATIC_REJECTIONS, ...OPERATOR_REJECTIONS] as const;
export type AutomaticRejection = (typeof AUTOMATIC_REJECTIONS)[number];

/** Why a claim goes to an operator: the rules give a reward the purchase did not get. */
export const REVIEW_REASONS = ['merchant_not_recognised', 'reward_below_rules'] as const;
export type ReviewReason = (typeof REVIEW_REASONS)[number];
export const OPERATOR_APPROVED = 'operator_approved';

export interface ClaimedTransaction {
  kind: 'auth' | 'settled';
  /** The event's reward_status: pending, matched, not_matched, reversed, unknown, ... */
  rewardStatus: string;
  currency: string;
  /** A refund (negative purchase) cannot earn: it claws back. */
  isRefund: boolean;
  /** The merchant the descriptor or acquirer id matched, if any (the match trace's). */
  matchedMerchantId: string | null;
  /** The match trace's earn decision for the matched merchant, as recorded. */
  recordedEarn: { eligible: boolean; reasons: EarnReason[] } | null;
  /** The purchase's amount, and what its refunds took of it: those already clawed back for
   *  (processed) and every refund received, processed or not. */
  amountMinor: number;
  refundedMinor: number;
  refundsReceivedMinor: number;
  /** What the purchase keeps of its own reward, per balance type: earned and credited by claims or
   *  credits that name it, less what its refunds took back. A debit that names it (a correction)
   *  is not subtracted: a claim never restores what an adjustment took back on purpose. */
  keptCashbackMinor: number;
  keptBrandedMinor: number;
}

/** A cumulative offer the rules let the purchase count towards, and where the group stands on it. */
export interface ClaimProgress {
  terms: CumulativeTerms;
  /** The group's progress now: adding the purchase to it reaches what adding it then would have
   *  (the completions a measure reaches do not depend on the order of its purchases). */
  stored: StoredProgress;
  /** The purchase counts towards it already (its settlement, or a claim approved before, moved it). */
  counted: boolean;
}

export interface ClaimFacts {
  reason: ClaimReason;
  claimedMerchantId: string | null;
  transaction: ClaimedTransaction | null;
  /** The rules for the merchant in question (the claimed one, else the matched one) at the purchase's time. */
  evaluation: EarnDecision | null;
  /** The cumulative offers among the evaluation's qualifying ones (absent: none). */
  progress?: ClaimProgress[];
}

export interface ComputedReward {
  offerId: string;
  cashbackMinor: number;
  brandedMinor: number;
}

export type ClaimDecision =
  | { outcome: 'rejected'; reasonCode: AutomaticRejection; detail: string }
  | {
      outcome: 'needs_review';
      reasonCode: ReviewReason;
      detail: string;
      /** What the rules give for the purchase, net of the refunds it has had so far. */
      computed: ComputedReward;
      /** What is missing: the rules' reward less what the purchase kept, per balance type, with
       *  the rewards of the completions its missing progress reaches. */
      missing: { cashbackMinor: number; brandedMinor: number };
      /** The cumulative offers the purchase does not count towards yet: what it would add, and
       *  the completions that reaches as the group stands now. Approval moves them. */
      progress: ProgressStep[];
    };

const reject = (reasonCode: AutomaticRejection, detail: string): ClaimDecision => ({
  outcome: 'rejected',
  reasonCode,
  detail,
});

/** The merchant the claim is about: the one the cardholder names, else the one the trace matched. */
export function merchantInQuestion(facts: Pick<ClaimFacts, 'claimedMerchantId' | 'transaction'>): string | null {
  return facts.claimedMerchantId ?? facts.transaction?.matchedMerchantId ?? null;
}

export function decideClaim(facts: ClaimFacts): ClaimDecision {
  const txn = facts.transaction;
  if (!txn)
    return reject('transaction_not_received', 'no settled transaction with this id was received from the issuer');
  if (txn.kind === 'auth' || txn.rewardStatus === 'pending' || txn.rewardStatus === 'unknown')
    return reject('reward_pending', `the purchase is not settled and processed yet (${txn.kind}, ${txn.rewardStatus})`);
  if (txn.isRefund) return reject('not_a_purchase', 'the transaction is a refund: refunds claw back, they do not earn');
  if (txn.currency !== 'usd')
    return reject('currency_not_supported', `rewards are paid on usd purchases; this was ${txn.currency}`);
  if (txn.refundsReceivedMinor >= txn.amountMinor)
    return reject(
      'purchase_refunded',
      `the purchase of ${txn.amountMinor} was refunded in full (${txn.refundsReceivedMinor}; see evidence.refunds): it keeps no reward`,
    );
  const merchantId = merchantInQuestion(facts);
  if (!merchantId)
    return reject('merchant_not_identified', 'the descriptor matched no merchant and the claim names none');
  const aboutMatched = merchantId === txn.matchedMerchantId;
  // At the matched merchant the recorded decision says whether it was eligible (states at the
  // purchase time, which are not kept otherwise); a merchant the matcher missed has no recorded
  // decision, so the rules are evaluated for it.
  const recorded = aboutMatched ? txn.recordedEarn : null;
  const ineligible = recorded
    ? recorded.reasons
    : facts.evaluation && !facts.evaluation.eligible
      ? facts.evaluation.reasons
      : [];
  if (ineligible.length > 0)
    return reject(
      ineligible[0],
      `not eligible at ${merchantId}: ${ineligible.join(', ')} (see evidence.matchTrace / evidence.rules)`,
    );
  const winningOfferId = facts.evaluation?.winningOfferId;
  const ownReward = !!winningOfferId && facts.evaluation!.offers.some((o) => o.offerId === winningOfferId && o.reward);
  const progress = facts.progress ?? [];
  if (!ownReward && progress.length === 0)
    return reject('no_active_offer', `no offer of ${merchantId} gives a reward for this purchase`);
  // The rules' reward is on the whole purchase, as its settlement earns; its refunds so far take
  // their share of it, as they would have of an earned reward (of each offer applied, as refunds
  // claw back each). Compared with what it keeps.
  const refunds = { purchaseAmountMinor: txn.amountMinor, refundedMinor: txn.refundedMinor };
  const applied = ownReward ? appliedRewards(facts.evaluation) : [];
  const net = (part: 'cashbackMinor' | 'brandedMinor') =>
    applied.reduce((sum, a) => sum + netOfRefunds(a.reward[part], refunds), 0);
  const steps = missingProgress(progress, txn.amountMinor - txn.refundedMinor);
  const completed = completedOf(steps);
  const computed = {
    offerId: ownReward ? winningOfferId! : (steps[0]?.offerId ?? progress[0].terms.offerId),
    cashbackMinor: net('cashbackMinor') + completed.cashbackMinor,
    brandedMinor: net('brandedMinor') + completed.brandedMinor,
  };
  const kept = aboutMatched
    ? { cashback: txn.keptCashbackMinor, branded: txn.keptBrandedMinor }
    : { cashback: 0, branded: 0 };
  const missing = {
    cashbackMinor: Math.max(0, net('cashbackMinor') - kept.cashback) + completed.cashbackMinor,
    brandedMinor: Math.max(0, net('brandedMinor') - kept.branded) + completed.brandedMinor,
  };
  const netOf = txn.refundedMinor > 0 ? ` net of refunds of ${txn.refundedMinor}` : '';
  const counts = progressDetail(steps, progress);
  if (missing.cashbackMinor + missing.brandedMinor === 0 && steps.length === 0)
    return reject(
      'already_rewarded',
      `the purchase kept ${kept.cashback} cashback and ${kept.branded} branded${netOf}; the rules give ${computed.cashbackMinor} and ${computed.brandedMinor}${counts}`,
    );
  return {
    outcome: 'needs_review',
    reasonCode: aboutMatched ? 'reward_below_rules' : 'merchant_not_recognised',
    detail: aboutMatched
      ? `the rules give ${computed.cashbackMinor} cashback and ${computed.brandedMinor} branded${netOf}; the purchase kept ${kept.cashback} and ${kept.branded}${counts}`
      : `the descriptor was not recognised as ${merchantId}; there the rules give ${computed.cashbackMinor} cashback and ${computed.brandedMinor} branded${netOf}${counts}`,
    computed,
    missing,
    progress: steps,
  };
}

/**
 * The cumulative offers the purchase does not count towards yet: its net amount moves the group's
 * progress as the settlement's would have, and the completions that reaches are missing too.
 */
function missingProgress(progress: readonly ClaimProgress[], netAmountMinor: number): ProgressStep[] {
  return progress
    .filter((p) => !p.counted)
    .map((p) => progressOnSettlement(p.terms, netAmountMinor, p.stored))
    .filter((step) => step.contribution > 0);
}

/** What the purchase adds to the cumulative offers, or that it counts towards them already. */
function progressDetail(steps: readonly ProgressStep[], progress: readonly ClaimProgress[]): string {
  const adds = steps.map((step) => {
    const paid = step.completions.reduce((sum, c) => sum + c.amountMinor, 0);
    const reached =
      step.completions.length > 0 ? `, reaching ${step.completions.length} completion(s) worth ${paid}` : '';
    return `; it would add ${step.contribution} to offer ${step.offerId} (${step.before.measure} to ${step.after.measure})${reached}`;
  });
  const counted = progress.filter((p) => p.counted).map((p) => `; it counts towards offer ${p.terms.offerId} already`);
  return [...adds, ...counted].join('');
}

/**
 * Each offer's reward as the merchant's stacking applies it to the purchase, the first-ranked first:
 * one offer under best_of and priority, every one the cap leaves room for under stack (cut short
 * as the settlement cuts it, branded first).
 */
function appliedRewards(evaluation: EarnDecision | null): Array<{ offerId: string; reward: OfferReward }> {
  if (!evaluation) return [];
  const rewardOf = (offerId: string) => evaluation.offers.find((o) => o.offerId === offerId)?.reward;
  return (evaluation.stacking ?? [])
    .filter((o) => o.appliedMinor > 0 && rewardOf(o.offerId))
    .map((o) => {
      const reward = rewardOf(o.offerId)!;
      return {
        offerId: o.offerId,
        reward: o.reason === 'stack_cap' ? trimmed(reward, o.appliedMinor, 'stack') : reward,
      };
    });
}

/** Where a claim stands, as the workflow and the operator's update see it. */
export interface ClaimOutcome {
  claimId: string;
  status: ClaimStatus;
  reasonCode: string | null;
  adjustmentIds: string[];
  /** The operator's decision that resolved it (OperatorDecision.decisionId); absent before one did. */
  decisionId?: string | null;
}

/** An operator's choice on a claim in review (POST /admin/v1/claims/{id}/approve or reject). */
export type OperatorChoice =
  | {
      decision: 'approve';
      actor: string;
      /** Replaces the computed reward: one adjustment of this amount and balanceType. */
      amountMinor?: number;
      balanceType?: BalanceType;
      learnDescriptor?: boolean;
      note?: string;
    }
  | { decision: 'reject'; actor: string; reasonCode: string; note?: string };

/** The choice as the API hands it to the claim's workflow: one attempt, bounded in time. */
export type OperatorDecision = OperatorChoice & {
  /** Names this attempt: the claim records the one that resolved it, so each caller learns whether it won. */
  decisionId?: string;
  /** ISO instant on the database's clock after which the decision must not be applied: the API
   *  has answered by then that nothing was done (docs/decisions/0035-claim-decisions-answer-in-bounded-time.md). */
  acceptBy?: string;
};
