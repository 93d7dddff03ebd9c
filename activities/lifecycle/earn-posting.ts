// The earn side of a purchase's settlement, planned into its posting batch: cashback earned (on
// hold for the return window, repaying first what the group owes), branded balance earned (a
// grant dated from the purchase), the issuer's share and the merchant's commission of a funded
// offer, and the completions of cumulative offers the purchase reached. The settlement plans
// them with the purchase's own reward; an approved claim plans the completions of a purchase the
// matcher missed the same way (activities/claims/progress.ts), so both write the same rows, which
// refunds then find alike.
import { newId } from '../../core/ids';
import { holdDays, payableAt, repaymentOf } from '../../core/rules/cashback';
import { accounts } from '../../core/ledger';
import type { PostingBatch } from '../../core/domain/ledger/batch';
import { addAccompanying, addPosting, type RewardPosting } from './reward-posting';
import { commissionOf, issuerShareOf, NO_FUNDING_TERMS, type FundingTerms } from '../../core/rules/funding';
import type { AppliedReward } from '../../core/rules/settlement';
import type { ProgressStep } from '../../core/rules/progress';
import type { ContextMerchant, DecisionContext } from './context';

const DAY_MS = 24 * 60 * 60 * 1000;

/** What the earn postings read of the purchase's context. */
export interface EarnContext {
  event: Pick<DecisionContext['event'], 'id' | 'issuerId' | 'chgId'>;
  /** The purchase's own date: holds and grants are dated from it. */
  asOf: Date;
  issuer: Pick<DecisionContext['issuer'], 'cashbackHoldDays' | 'brandedAvailabilityDelayDays'>;
  returnPeriodDaysByOffer: Record<string, number | null>;
  fundingByOffer: Record<string, FundingTerms>;
}

/** What the postings of one purchase share while they are planned. */
export interface EarnPlan {
  ctx: EarnContext;
  merchant: Pick<ContextMerchant, 'id' | 'name' | 'brandedAvailabilityDelayDays' | 'brandedExpiryDays'>;
  batch: PostingBatch;
  rewardEventIds: string[];
  rewardGrantIds: string[];
  common: RewardPosting['common'];
  key: (what: string) => string;
  /** What the group still owes once the cashback planned so far has repaid its part. */
  owedLeftMinor: number;
}

/** One reward the settlement posts: the purchase's own (from each offer applied), or a completion's. */
export interface Earning {
  amountMinor: number;
  offerId: string | null;
  /** Before every key of the reward's rows: '' for the purchase's own. */
  prefix: string;
  completion: number | null;
}

/**
 * The rewards of the completions the purchase reached on a cumulative offer (core/rules/progress.ts),
 * each posted like the purchase's own reward of its balance type, marked with its completion so
 * that a refund which takes the measure back below it finds it.
 */
export function addCompletions(plan: EarnPlan, step: ProgressStep): void {
  for (const c of step.completions) {
    if (c.amountMinor <= 0) continue;
    const prefix = `completion:${step.offerId}:${c.completion}:`;
    const earning = { amountMinor: c.amountMinor, offerId: step.offerId, prefix, completion: c.completion };
    const cashback = c.balanceType === 'cashback';
    const eventId = cashback ? addCashback(plan, earning) : addBranded(plan, earning);
    // The issuer's share of a funded cumulative offer is of each completion's reward, with it.
    addFunding(
      plan.batch,
      plan.ctx,
      {
        offerId: step.offerId,
        reward: cashback
          ? { cashbackMinor: c.amountMinor, brandedMinor: 0 }
          : { cashbackMinor: 0, brandedMinor: c.amountMinor },
      },
      {
        common: plan.common,
        key: (what) => plan.key(prefix + what),
        earnEvents: cashback ? { cashback: eventId } : { branded: eventId },
        commissionOnMinor: 0,
      },
    );
  }
}

/** Cashback earned, on hold for its return window, repaying first what the group owes. Its event id. */
export function addCashback(plan: EarnPlan, earning: Earning): string | undefined {
  const { ctx, batch, common } = plan;
  const { amountMinor, offerId, prefix, completion } = earning;
  const key = (what: string) => plan.key(prefix + what);
  if (amountMinor <= 0) return undefined;
  const { transfer, rewardEvent } = addPosting(batch, plan.rewardEventIds, {
    common,
    amountMinor,
    event: {
      idempotencyKey: key('cashback_earned'),
      type: 'cashback_earned',
      offerId,
      description: `Cashback at ${plan.merchant.name}`,
      completion,
    },
    transfer: { idempotencyKey: key('earn_cashback'), kind: 'earn_cashback' },
  });
  // On hold for the return window, counted from the purchase's own date.
  holdCashback(
    plan,
    transfer.id,
    amountMinor,
    holdDays(ctx.returnPeriodDaysByOffer[offerId!], ctx.issuer.cashbackHoldDays),
  );
  const repaidMinor = repaymentOf(amountMinor, plan.owedLeftMinor);
  if (repaidMinor > 0) {
    plan.owedLeftMinor -= repaidMinor;
    addPosting(batch, plan.rewardEventIds, {
      common,
      amountMinor: repaidMinor,
      event: {
        idempotencyKey: key('cashback_owed_repaid'),
        type: 'cashback_owed_repaid',
        offerId: null,
        description: 'Cashback applied to what a refund left owing',
      },
      transfer: { idempotencyKey: key('repay_cashback_owed'), kind: 'repay_cashback_owed' },
    });
  }
  return rewardEvent.id;
}

/**
 * The purchase's one hold: its own cashback and its completions' together, payable when the
 * longest of their return windows ends.
 */
function holdCashback(plan: EarnPlan, earnTransferId: string, amountMinor: number, days: number): void {
  const { event, asOf } = plan.ctx;
  const payable = payableAt(asOf, days);
  const held = plan.batch.holds.find((h) => h.transactionId === event.id);
  if (!held) {
    plan.batch.holds.push({
      transactionId: event.id,
      chgId: event.chgId,
      earnTransferIds: [earnTransferId],
      amountMinor,
      payableAt: payable,
    });
    return;
  }
  held.earnTransferIds.push(earnTransferId);
  held.amountMinor += amountMinor;
  if (payable > held.payableAt) held.payableAt = payable;
}

/** Branded balance earned, as a grant dated from the purchase. Its event id. */
export function addBranded(plan: EarnPlan, earning: Earning): string | undefined {
  const { ctx, merchant } = plan;
  const { event } = ctx;
  const { amountMinor, offerId, prefix, completion } = earning;
  if (amountMinor <= 0) return undefined;
  const delayDays = Math.max(ctx.issuer.brandedAvailabilityDelayDays, merchant.brandedAvailabilityDelayDays);
  const grantId = newId('rg');
  const { transfer, rewardEvent } = addPosting(plan.batch, plan.rewardEventIds, {
    common: plan.common,
    amountMinor,
    event: {
      idempotencyKey: plan.key(`${prefix}branded_earned`),
      type: 'branded_earned',
      offerId,
      rewardGrantId: grantId,
      description: `${merchant.name} balance earned`,
      completion,
    },
    transfer: { idempotencyKey: plan.key(`${prefix}earn_branded`), kind: 'earn_branded' },
  });
  plan.batch.grants.push({
    id: grantId,
    chgId: event.chgId,
    merchantId: merchant.id,
    accountId: accounts.chgBranded(event.issuerId, event.chgId, merchant.id).id,
    earnTransferId: transfer.id,
    sourceTransactionId: event.id,
    amountMinor,
    // Dated from the purchase, not from its processing: a late step gives the same dates.
    availableAt: new Date(ctx.asOf.getTime() + delayDays * DAY_MS),
    expiresAt: new Date(ctx.asOf.getTime() + merchant.brandedExpiryDays * DAY_MS),
  });
  plan.rewardGrantIds.push(grantId);
  return rewardEvent.id;
}

/**
 * A funded offer's transfers beside its reward's own (core/rules/funding.ts): the issuer's share
 * of each component moved from the merchant's receivable to the issuer's funding account, with
 * that component's earn event; the merchant's commission on `commissionOnMinor` (the amount
 * rewarded on, or 0), with the cashback earn event (else the branded one).
 */
export function addFunding(
  batch: PostingBatch,
  ctx: EarnContext,
  { offerId, reward }: { offerId: string; reward: Pick<AppliedReward['reward'], 'cashbackMinor' | 'brandedMinor'> },
  p: {
    common: RewardPosting['common'];
    key: (what: string) => string;
    earnEvents: { cashback?: string; branded?: string };
    commissionOnMinor: number;
  },
): void {
  const terms = termsOf(ctx, offerId);
  const shares = [
    { event: p.earnEvents.cashback, reward: reward.cashbackMinor, kind: 'issuer_share_cashback' },
    { event: p.earnEvents.branded, reward: reward.brandedMinor, kind: 'issuer_share_branded' },
  ] as const;
  for (const share of shares) {
    const amountMinor = share.event ? issuerShareOf(share.reward, terms.issuerShareBps) : 0;
    if (amountMinor > 0)
      addAccompanying(batch, {
        common: p.common,
        amountMinor,
        rewardEventId: share.event!,
        transfer: { idempotencyKey: p.key(share.kind), kind: share.kind },
      });
  }
  const commissionMinor = p.commissionOnMinor > 0 ? commissionOf(p.commissionOnMinor, terms) : 0;
  const commissionEvent = p.earnEvents.cashback ?? p.earnEvents.branded;
  if (commissionMinor > 0 && commissionEvent)
    addAccompanying(batch, {
      common: p.common,
      amountMinor: commissionMinor,
      rewardEventId: commissionEvent,
      transfer: { idempotencyKey: p.key('commission_charged'), kind: 'commission_charged' },
    });
}

export const termsOf = (ctx: EarnContext, offerId: string) => ctx.fundingByOffer[offerId] ?? NO_FUNDING_TERMS;
