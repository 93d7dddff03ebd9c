// An approved claim's part on cumulative offers (docs/decisions/0062-claims-count-towards-cumulative-offers.md):
// a purchase the matcher missed counts towards the merchant's spend-X-get-Y and Nth-purchase
// offers as its settlement would have. Under the group's account locks the group's progress is
// read again, the purchase's net amount moves it, and the completions that reaches are posted as
// the purchase's own completions: the same rows a settlement writes (activities/lifecycle/earn-posting.ts),
// from the merchant's receivable, drawing on the offer's budget, with the issuer's share, on hold
// with the purchase. So a later refund of the purchase lowers the measure and takes them back like
// any other, and rewards stay min(maxRedemptions, completions(measure)) x Y; the purchase's match
// trace names them (`claims`), with the budgets they drew on. Not a claim credit:
// a credit is no completion, and the next purchase would reach the same threshold and earn it again.
import type { IngestedEvent } from '../../prisma/generated/client';
import { Prisma } from '../../prisma/generated/client';
import { accounts, purchaseLockOrder } from '../../core/ledger';
import { ensureAccounts, lockAccounts } from '../../core/domain/ledger/accounts';
import { emptyBatch, writeBatch } from '../../core/domain/ledger/batch';
import { progressWriteCtes, storedProgress } from '../../core/domain/offer-progress';
import { cumulativeTermsOf, progressOnSettlement, type ProgressStep } from '../../core/rules/progress';
import type { Tx } from '../../core/domain/ledger';
import type { EarnOffer } from '../../core/rules/eligibility';
import { loadMerchantDetails } from '../lifecycle/context';
import { budgetUsesOf } from '../lifecycle/decide';
import { brandedBalanceUsable, withUsableBranded } from '../../core/rules/branded-rate';
import { addCompletions, type EarnPlan } from '../lifecycle/earn-posting';

export interface ClaimedProgress {
  steps: ProgressStep[];
  rewardEventIds: string[];
  rewardGrantIds: string[];
}

const NOTHING: ClaimedProgress = { steps: [], rewardEventIds: [], rewardGrantIds: [] };

/**
 * Counts the purchase towards `offerIds` (the offers the claim's review found it missing from),
 * each it does not count towards yet, by its amount net of the refunds processed so far. Locks,
 * in one id-ordered pass, every account the completions and the claim's own credit may touch:
 * the caller posts that credit afterwards under the same locks.
 */
export async function countClaimedPurchase(
  tx: Tx,
  p: {
    claimId: string;
    purchase: IngestedEvent;
    merchantId: string;
    offerIds: readonly string[];
    netAmountMinor: number;
    /** The issuer's clock: dates the rows, as the purchase's settlement did. */
    at: Date;
  },
): Promise<ClaimedProgress> {
  if (p.offerIds.length === 0 || p.netAmountMinor <= 0) return NOTHING;
  const { purchase, merchantId } = p;
  const { issuerId, chgId } = purchase;
  // The terms as of the purchase's date; read before the locks, as nothing here is locked by
  // them but the progress, which is read again under them.
  const details = await loadMerchantDetails(tx, {
    issuerId,
    chgId,
    merchantId,
    asOf: purchase.eventCreatedAt,
    storeEnrolments: false,
  });
  const { merchant } = details;
  const issuer = await issuerTerms(tx, issuerId);
  // As at settlement: branded balance the merchant cannot honour counts, and pays nothing.
  const usable = merchant !== null && brandedBalanceUsable(merchant, issuer.brandedAvailabilityDelayDays);
  const offers = details.offers
    .filter((o) => p.offerIds.includes(o.id) && o.cumulative)
    .map((o) => withUsableBranded(o, usable));
  if (!merchant || offers.length === 0) return NOTHING;
  const issuerShare = offers.some((o) => (details.fundingByOffer[o.id]?.issuerShareBps ?? 0) > 0);
  const locked = await lockAll(tx, purchase, merchantId, p.at, issuerShare);
  const steps = await stepsDue(tx, offers, purchase, p.netAmountMinor);
  if (steps.length === 0) return NOTHING;
  const plan: EarnPlan = {
    ctx: {
      event: purchase,
      asOf: purchase.eventCreatedAt,
      issuer,
      returnPeriodDaysByOffer: details.returnPeriodDaysByOffer,
      fundingByOffer: details.fundingByOffer,
    },
    merchant,
    batch: emptyBatch(issuerId, p.at),
    rewardEventIds: [],
    rewardGrantIds: [],
    common: { chgId, merchantId, transactionId: purchase.id },
    key: (what) => `claim:${p.claimId}:${what}`,
    owedLeftMinor: locked.get(accounts.chgCashbackOwed(issuerId, chgId).id)?.balanceMinor ?? 0,
  };
  for (const step of steps) addCompletions(plan, step);
  plan.batch.budgetUses = budgetUsesOf({ earnOffers: offers }, { settlement: { applied: [] }, progress: steps });
  // The purchase's trace names what the claim counted and the budgets it drew on: a refund gives
  // a completion back to the budget the trace names, as it does for a settlement's.
  const claimed = {
    claimId: p.claimId,
    progress: steps,
    budgetUses: plan.batch.budgetUses,
    rewardEventIds: plan.rewardEventIds,
  };
  await writeBatch(tx, plan.batch, locked, {
    ctes: [
      ...progressWriteCtes(steps, { issuerId, chgId, transactionId: purchase.id, at: p.at }),
      Prisma.sql`trace_claimed AS (
        UPDATE ingested_event
           SET match_trace = jsonb_set(coalesce(match_trace, '{}'::jsonb), '{claims}',
                                       coalesce(match_trace->'claims', '[]'::jsonb) || jsonb_build_array(${JSON.stringify(claimed)}::jsonb))
         WHERE id = ${purchase.id})`,
    ],
  });
  return { steps, rewardEventIds: plan.rewardEventIds, rewardGrantIds: plan.rewardGrantIds };
}

/**
 * Every account the completions and the claim's credit may touch, created if missing (what the
 * group owes only if it exists) and locked in id order, as a refund locks them: the group's
 * accounts sort before the issuer's and the merchant's.
 */
async function lockAll(tx: Tx, purchase: IngestedEvent, merchantId: string, at: Date, issuerShare: boolean) {
  const { issuerId, chgId } = purchase;
  const order = purchaseLockOrder(issuerId, chgId, merchantId);
  const created = [
    ...order.lockedFirst,
    ...order.lockedAtWrite,
    accounts.issuerAdjustments(issuerId),
    ...(issuerShare ? [accounts.issuerFunding(issuerId)] : []),
  ];
  await ensureAccounts(tx, created, at);
  return lockAccounts(
    tx,
    [...created, ...order.lockedIfPresent].map((r) => r.id),
  );
}

/**
 * Each offer the purchase does not count towards yet, moved by its net amount from the group's
 * progress read under the locks the caller holds (a contribution row says it counts already).
 */
async function stepsDue(
  tx: Tx,
  offers: readonly EarnOffer[],
  purchase: IngestedEvent,
  netAmountMinor: number,
): Promise<ProgressStep[]> {
  const rows = await tx.$queryRaw<Array<{ offer_id: string }>>`
    SELECT offer_id FROM offer_contribution WHERE transaction_id = ${purchase.id}`;
  const counted = new Set(rows.map((r) => r.offer_id));
  const steps: ProgressStep[] = [];
  for (const offer of offers) {
    if (counted.has(offer.id)) continue;
    const stored = await storedProgress(tx, offer.id, purchase.chgId);
    const step = progressOnSettlement(cumulativeTermsOf(offer), netAmountMinor, stored);
    if (step.contribution > 0) steps.push(step);
  }
  return steps;
}

function issuerTerms(tx: Tx, issuerId: string) {
  return tx.issuer.findUniqueOrThrow({
    where: { id: issuerId },
    select: { cashbackHoldDays: true, brandedAvailabilityDelayDays: true },
  });
}
