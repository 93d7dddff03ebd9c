// Turns a decision context into the reward decision and its match trace: the record issuer
// support reads to answer "why no cashback?" (API.md, match-trace). The trace is written
// when the event is processed and never recomputed.
import { stackingPolicy } from '../../core/rules/stacking';
import { evaluateEarn, REWARD_CURRENCY, termsAt, type EarnDecision } from '../../core/rules/eligibility';
import { tierOf } from '../../core/rules/reward-kinds';
import { evaluateSpend, type SpendDecision } from '../../core/rules/spend-eligibility';
import { decideSettlement, type SettlementDecision } from '../../core/rules/settlement';
import { fromDbMinor } from '../../core/ledger';
import type { CatalogueStatus } from '../../core/rules/offer-status';
import type { DecisionContext } from './context';
import type { BudgetUse } from '../../core/domain/budgets';
import { cumulativeTermsOf, progressOnSettlement, type ProgressStep } from '../../core/rules/progress';

export interface RewardDecision {
  status: 'matched' | 'not_matched';
  merchantId: string | null;
  earn: EarnDecision | null;
  spend: SpendDecision | null;
  settlement: SettlementDecision;
  /** Each cumulative offer the purchase counts towards: what it adds and the completions it earns. */
  progress: ProgressStep[];
  trace: Record<string, unknown>;
}

/**
 * Decides as of the purchase's own date (`ctx.asOf`): its offers, and the branded balance it may
 * spend. `processedAt` only dates the trace.
 */
export function decideReward(ctx: DecisionContext, processedAt: Date): RewardDecision {
  const amountMinor = fromDbMinor(ctx.event.amountMinor);
  const currencyOk = ctx.event.currency === REWARD_CURRENCY;
  const merchant = ctx.merchant;
  const earn =
    merchant && currencyOk
      ? evaluateEarn({
          merchant: { id: merchant.id, status: merchant.status as CatalogueStatus },
          offers: ctx.earnOffers,
          activation: ctx.activation && {
            status: ctx.activation.status as CatalogueStatus,
            activatedAt: ctx.activation.activatedAt,
          },
          groupStatus: ctx.groupStatus,
          cardholderStatus: ctx.cardholderStatus,
          cardStatus: ctx.cardStatus,
          transaction: {
            amountMinor,
            mcc: ctx.payload.mcc,
            currency: ctx.event.currency,
            at: ctx.asOf,
          },
          earnedSoFarByOffer: ctx.earnedSoFarByOffer,
          redeemedSoFarByOffer: ctx.redeemedSoFarByOffer,
          now: ctx.asOf,
          stacking: stackingPolicy(merchant.stacking, merchant.stackCapBps),
        })
      : null;
  const spend =
    merchant && currencyOk
      ? evaluateSpend({
          merchant: {
            status: merchant.status as CatalogueStatus,
            brandedEnabled: merchant.brandedEnabled,
            spendMinimumMinor: fromDbMinor(merchant.brandedSpendMinimumMinor),
            availabilityDelayDays: merchant.brandedAvailabilityDelayDays,
          },
          groupStatus: ctx.groupStatus,
          grants: ctx.grants,
          issuerDelayDays: ctx.issuer.brandedAvailabilityDelayDays,
          amountMinor,
          at: ctx.asOf,
        })
      : null;
  return concluded(ctx, processedAt, earn, spend);
}

/**
 * The grants held less than the decision counted on (a purchase settled meanwhile drew from
 * them): the same decision with what was really drawn, earn applying to the rest, and its trace
 * saying so.
 */
export function redecideAfterDraw(
  ctx: DecisionContext,
  decision: RewardDecision,
  drawnMinor: number,
  processedAt: Date,
): RewardDecision {
  const spend: SpendDecision | null = decision.spend && {
    ...decision.spend,
    eligible: drawnMinor > 0,
    availableBalanceMinor: drawnMinor,
    spendRestrictionReasons: drawnMinor > 0 ? [] : ['no_available_balance'],
  };
  return concluded(ctx, processedAt, decision.earn, spend);
}

/** The settlement the earn and spend decisions give, its status and its trace. */
function concluded(
  ctx: DecisionContext,
  processedAt: Date,
  earn: EarnDecision | null,
  spend: SpendDecision | null,
): RewardDecision {
  const amountMinor = fromDbMinor(ctx.event.amountMinor);
  const currencyOk = ctx.event.currency === REWARD_CURRENCY;
  const settlement = decideSettlement({
    amountMinor,
    earn,
    spend,
    offers: ctx.earnOffers,
    earnedSoFarByOffer: ctx.earnedSoFarByOffer,
    stacking: ctx.merchant ? stackingPolicy(ctx.merchant.stacking, ctx.merchant.stackCapBps) : undefined,
  });
  const progress = progressOf(ctx, earn, amountMinor);
  const completed = progress.some((p) => p.completions.some((c) => c.amountMinor > 0));
  const rewarded = settlement.spentMinor > 0 || settlement.cashbackMinor + settlement.brandedMinor > 0 || completed;
  const status = rewarded ? 'matched' : 'not_matched';
  const trace = decisionTrace(ctx, processedAt, { amountMinor, currencyOk, earn, spend, settlement, progress, status });
  const merchantId = ctx.merchant?.id ?? ctx.match.merchantId ?? null;
  return { status, merchantId, earn, spend, settlement, progress, trace };
}

/**
 * The cumulative offers the purchase qualified for, each moved by its whole amount (however it was
 * paid, as the minimum spend), from the group's progress read under its locks.
 */
function progressOf(ctx: DecisionContext, earn: EarnDecision | null, amountMinor: number): ProgressStep[] {
  if (!earn) return [];
  return earn.cumulativeOfferIds.map((offerId) =>
    progressOnSettlement(
      cumulativeTermsOf(ctx.earnOffers.find((o) => o.id === offerId)!),
      amountMinor,
      ctx.progressByOffer[offerId],
    ),
  );
}

/**
 * What the settlement takes from the budgets of the offers applied and of the cumulative offers
 * whose completions it reached: each one's whole reward, from the purchase's period, as the
 * decision read the budget. None for an offer without a budget.
 */
export function budgetUsesOf(
  ctx: Pick<DecisionContext, 'earnOffers'>,
  { settlement, progress }: { settlement: Pick<RewardDecision['settlement'], 'applied'>; progress: ProgressStep[] },
): BudgetUse[] {
  const rewards = [
    ...settlement.applied.map(({ offerId, reward }) => ({
      offerId,
      amountMinor: reward.totalMinor,
      cappedByBudget: reward.cappedBy === 'budget',
    })),
    ...progress.map((step) => ({
      offerId: step.offerId,
      amountMinor: step.completions.reduce((sum, c) => sum + c.amountMinor, 0),
      cappedByBudget: step.cappedByBudget ?? false,
    })),
  ];
  return rewards.flatMap(({ offerId, amountMinor, cappedByBudget }) => {
    const budget = ctx.earnOffers.find((o) => o.id === offerId)?.budget;
    if (!budget || amountMinor === 0) return [];
    return [{ offerId, periodKey: budget.periodKey, amountMinor, usedMinor: budget.usedMinor, cappedByBudget }];
  });
}

/** The match trace the issuer reads back: every check, the arithmetic and the outcome. */
function decisionTrace(
  ctx: DecisionContext,
  processedAt: Date,
  d: Pick<RewardDecision, 'earn' | 'spend' | 'settlement' | 'progress' | 'status'> & {
    amountMinor: number;
    currencyOk: boolean;
  },
): Record<string, unknown> {
  const { amountMinor, currencyOk, earn, spend, settlement, progress, status } = d;
  const budgetUses = budgetUsesOf(ctx, d);
  const listed = ctx.offers.find((o) => o.id === settlement.winningOfferId);
  // A tiered offer's rates are its tier's, the one the whole purchase reached.
  const winning = listed && termsAt(listed, amountMinor);
  return {
    evaluatedAt: processedAt.toISOString(),
    decidedAsOf: ctx.asOf.toISOString(),
    transaction: {
      amountMinor,
      currency: ctx.event.currency,
      mcc: ctx.payload.mcc,
      createdAt: ctx.event.eventCreatedAt.toISOString(),
      merchantDescriptor: ctx.payload.merchantDescriptor,
    },
    merchantMatch: ctx.match,
    checks: [
      { name: 'currency_usd', passed: currencyOk, detail: `currency is ${ctx.event.currency}` },
      { name: 'merchant_identified', passed: ctx.merchant !== null, detail: ctx.match.detail },
    ],
    earn: earn && { eligible: earn.eligible, reasons: earn.reasons, offers: earn.offers },
    winningOfferId: settlement.winningOfferId,
    // Every qualifying offer with what it would give and why it applied or not (lower_value,
    // lower_priority, stack_cap), by the merchant's policy; and what each offer applied pays. The
    // arithmetic below is the first-applied offer's.
    stacking: ctx.merchant && {
      policy: ctx.merchant.stacking,
      ...(ctx.merchant.stacking === 'stack' ? { stackCapBps: ctx.merchant.stackCapBps } : {}),
      offers: settlement.stacking,
      applied: settlement.applied.map(({ offerId, reward }) => ({
        offerId,
        cashbackMinor: reward.cashbackMinor,
        brandedMinor: reward.brandedMinor,
        cappedBy: reward.cappedBy,
      })),
    },
    arithmetic: {
      amountMinor,
      spentMinor: settlement.spentMinor,
      eligibleAmountMinor: settlement.eligibleAmountMinor,
      cashbackRateBps: winning?.cashbackRateBps ?? null,
      brandedRateBps: winning?.brandedRateBps ?? null,
      ...(listed?.tiers ? { tier: tierOf(listed.tiers, amountMinor) } : {}),
      uncappedMinor: settlement.reward?.uncappedMinor ?? 0,
      cappedBy: settlement.reward?.cappedBy ?? null,
      cashbackMinor: settlement.cashbackMinor,
      brandedMinor: settlement.brandedMinor,
      formula: 'floor(eligibleAmountMinor x rateBps / 10000) per component, then caps (branded trimmed first)',
    },
    spend: spend && { ...spend, spentMinor: settlement.spentMinor },
    // Each cumulative offer the purchase counted towards (outside stacking): what it added to the
    // group's measure, the progress before and after, and the completions it earned.
    progress: progress.map((p) => ({
      offerId: p.offerId,
      contribution: p.contribution,
      measureBefore: p.before.measure,
      measureAfter: p.after.measure,
      completionsBefore: p.before.rewarded,
      completionsAfter: p.after.rewarded,
      completions: p.completions,
    })),
    // Each budgeted offer's budget as read for the purchase's period, and what the rewards take
    // from the applied offers' budgets: a refund gives it back to that period, a claim judges on
    // what was left. budgetUse: the first of them, as read before offers stacked.
    budgets: Object.fromEntries(ctx.earnOffers.filter((o) => o.budget).map((o) => [o.id, o.budget])),
    budgetUse: budgetUses[0] ?? null,
    budgetUses,
    outcome: status,
  };
}
