// Settlement: the final reward effects of a purchase, all in ONE database transaction —
// spend of branded balance, earn transfers, reward events, the grant, the decision record
// and the qualified_settlement webhook record. Either all of it is committed or none; a
// retry after a commit finds the event processed and returns what was posted.
import { newId } from '../../core/ids';
import { postTransfer, recordRewardEvent, spendBranded, earnBranded } from '../ledger';
import { decideSettlement } from '../../core/rules/settlement';
import { fromDbMinor } from '../../core/ledger';
import { recordWebhook } from '../webhooks/record';
import type { Prisma } from '../../prisma/generated/client';
import { ensureAndLockAccounts } from '../ledger/accounts';
import { accounts } from '../../core/ledger';
import { lockEvent, loadDecisionContext } from './context';
import { decideReward } from './decide';
import { storedOutcome } from './stored-outcome';
import type { LifecycleDeps } from './deps';
import type { StepInput, StepOutcome } from './types';

const DAY_MS = 24 * 60 * 60 * 1000;

export async function settleTransaction(deps: LifecycleDeps, input: StepInput): Promise<StepOutcome> {
  const at = input.atMs !== undefined ? new Date(input.atMs) : deps.clock.now();
  await deps.faults?.beforeActivity?.('settleTransaction', input.eventId);
  const outcome = await deps.db.$transaction(async (tx) => {
    const event = await lockEvent(tx, input.eventId);
    if (event.processedAt) return storedOutcome(tx, event);
    const ctx = await loadDecisionContext(tx, event, at);
    let decision = decideReward(ctx, at);
    const base = { issuerId: event.issuerId, chgId: event.chgId, transactionId: event.id, at };
    const rewardEventIds: string[] = [];
    const rewardGrantIds: string[] = [];
    const merchantId = ctx.merchant?.id;
    if (merchantId && (decision.settlement.spentMinor > 0 || decision.settlement.cashbackMinor > 0 || decision.settlement.brandedMinor > 0)) {
      // Each posting below locks its two accounts in id order, but the branded account sorts
      // before the merchant receivable the cashback posting already holds, and a merchant's
      // or group's first purchases also insert the accounts: create and lock all three now,
      // in one id order, so concurrent settlements cannot deadlock (40P01 seen under load).
      await ensureAndLockAccounts(tx, [
        accounts.merchantReceivable(event.issuerId, merchantId),
        accounts.chgCashback(event.issuerId, event.chgId),
        accounts.chgBranded(event.issuerId, event.chgId, merchantId),
      ], at);
    }

    if (merchantId && decision.settlement.spentMinor > 0) {
      const rewardEventId = newId('brevt');
      const draw = await spendBranded(tx, { ...base, merchantId, idempotencyKey: `settle:${event.id}:spend`, rewardEventId, maxAmountMinor: decision.settlement.spentMinor });
      if (draw.drawnMinor > 0) {
        await recordRewardEvent(tx, { ...base, id: rewardEventId, merchantId, idempotencyKey: `settle:${event.id}:branded_spent`, type: 'branded_spent', amountMinor: draw.drawnMinor, rewardGrantId: draw.allocations[0]?.grantId ?? null, description: `Spent at ${ctx.merchant!.name}`, occurredAt: at });
        rewardEventIds.push(rewardEventId);
      }
      // The balance locked by the draw may be less than read before it (a concurrent spend):
      // earn then applies to what the draw really left.
      if (draw.drawnMinor !== decision.settlement.spentMinor) {
        const spend = { eligible: draw.drawnMinor > 0, availableBalanceMinor: draw.drawnMinor, pendingBalanceMinor: 0, spendRestrictionReasons: [] };
        decision = { ...decision, settlement: decideSettlement({ amountMinor: fromDbMinor(event.amountMinor), earn: decision.earn, spend, offers: ctx.earnOffers, earnedSoFarByOffer: ctx.earnedSoFarByOffer }) };
      }
    }
    const { cashbackMinor, brandedMinor, winningOfferId } = decision.settlement;
    if (merchantId && cashbackMinor > 0) {
      const rewardEventId = newId('brevt');
      await recordRewardEvent(tx, { ...base, id: rewardEventId, merchantId, offerId: winningOfferId, idempotencyKey: `settle:${event.id}:cashback_earned`, type: 'cashback_earned', amountMinor: cashbackMinor, description: `Cashback at ${ctx.merchant!.name}`, occurredAt: at });
      await postTransfer(tx, { ...base, merchantId, kind: 'earn_cashback', idempotencyKey: `settle:${event.id}:earn_cashback`, amountMinor: cashbackMinor, rewardEventId });
      rewardEventIds.push(rewardEventId);
    }
    if (merchantId && brandedMinor > 0) {
      const merchant = ctx.merchant!;
      const delayDays = Math.max(ctx.issuer.brandedAvailabilityDelayDays, merchant.brandedAvailabilityDelayDays);
      const rewardEventId = newId('brevt');
      const earned = await earnBranded(tx, {
        ...base, merchantId, idempotencyKey: `settle:${event.id}:earn_branded`, amountMinor: brandedMinor, rewardEventId,
        availableAt: new Date(at.getTime() + delayDays * DAY_MS),
        expiresAt: new Date(at.getTime() + merchant.brandedExpiryDays * DAY_MS),
      });
      await recordRewardEvent(tx, { ...base, id: rewardEventId, merchantId, offerId: winningOfferId, idempotencyKey: `settle:${event.id}:branded_earned`, type: 'branded_earned', amountMinor: brandedMinor, rewardGrantId: earned.grant.id, description: `${merchant.name} balance earned`, occurredAt: at });
      rewardEventIds.push(rewardEventId);
      rewardGrantIds.push(earned.grant.id);
    }

    const status = rewardEventIds.length > 0 ? 'matched' : 'not_matched';
    await tx.ingestedEvent.update({
      where: { id: event.id },
      data: { rewardStatus: status, merchantId: decision.merchantId, matchTrace: { ...decision.trace, outcome: status, rewardEventIds, rewardGrantIds } as Prisma.InputJsonValue, processedAt: at, failureReason: null },
    });
    let webhookId: string | undefined;
    if (status === 'matched') {
      const authorization = event.authorizationExternalId
        ? await tx.ingestedEvent.findFirst({ where: { issuerId: event.issuerId, kind: 'auth', externalId: event.authorizationExternalId }, select: { id: true } })
        : null;
      webhookId = await recordWebhook(tx, {
        issuerId: event.issuerId,
        type: 'qualified_settlement',
        sourceEventId: event.id,
        at,
        data: {
          chgId: event.chgId, transactionId: event.id, externalId: event.externalId, authorizationId: authorization?.id ?? null,
          merchantId, rewardEventIds, rewardGrantIds, currency: 'usd',
          earnedAmountMinor: cashbackMinor + brandedMinor, cashbackMinor, brandedMinor, spentAmountMinor: decision.settlement.spentMinor,
        },
      });
    }
    return { status, merchantId: decision.merchantId ?? undefined, webhookId } satisfies StepOutcome;
  });
  // Test seam for crash safety: lets a test fail the activity after its commit.
  await deps.faults?.afterCommit?.('settleTransaction', input.eventId);
  return outcome;
}
