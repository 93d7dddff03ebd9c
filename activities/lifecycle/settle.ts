// Settlement: the final reward effects of a purchase, all in ONE database transaction —
// spend of branded balance, earn transfers, reward events, the grant, the decision record
// and the qualified_settlement webhook record. Either all of it is committed or none; a
// retry after a commit finds the event processed and returns what was posted.
// Four statements on the usual path (context.ts reads, core/domain/ledger/batch.ts writes):
// lock the event and read its context, lock the purchase's accounts, read the merchant's
// terms and the group's balances, write every effect.
import { newId } from '../../core/ids';
import { holdDays, payableAt, repaymentOf } from '../../core/rules/cashback';
import { accounts, allocateDraw, compareFifo, sumMinor, type Allocation } from '../../core/ledger';
import { Prisma } from '../../prisma/generated/client';
import { sqlTransaction } from '../../prisma/sql-transaction';
import { emptyBatch, writeBatch, type PostingBatch } from '../../core/domain/ledger/batch';
import { addPosting } from './reward-posting';
import { webhookWrite } from '../../core/domain/webhook-records';
import { writtenOutboxRows, type OutboxRow } from '../webhooks/outbox';
import { lockEventWithContext, type ContextMerchant, type DecisionContext } from './context';
import type { QualifiedSettlementData } from '../../core/webhooks/payloads';
import { decideReward, redecideAfterDraw } from './decide';
import { storedOutcome } from './stored-outcome';
import type { LifecycleDeps } from './deps';
import type { StepInput, StepOutcome } from './types';

const DAY_MS = 24 * 60 * 60 * 1000;

export async function settleTransaction(deps: LifecycleDeps, input: StepInput): Promise<StepOutcome> {
  const workflowAt = input.atMs !== undefined ? new Date(input.atMs) : deps.clock.now();
  await deps.faults?.beforeActivity?.('settleTransaction', input.eventId);
  let lockedAccountIds: string[] = [];
  let written: OutboxRow[] = [];
  const outcome = await sqlTransaction(deps.db, async (tx) => {
    // `at` is the issuer's clock (a sandbox issuer's test clock moves it): it dates what the step records;
    // what the purchase earns and spends is decided as of its own date (ctx.asOf).
    const {
      event,
      at,
      context: ctx,
    } = await lockEventWithContext(tx, input.eventId, workflowAt, { lockAccounts: true, known: deps.knownAccounts });
    if (!ctx) return storedOutcome(tx, event);
    lockedAccountIds = [...ctx.accounts.keys()];
    const { decision, batch, rewardEventIds, rewardGrantIds } = planSettlement(ctx, at);
    const status = rewardEventIds.length > 0 ? 'matched' : 'not_matched';
    const { cashbackMinor, brandedMinor, spentMinor } = decision.settlement;
    const trace = { ...decision.trace, outcome: status, rewardEventIds, rewardGrantIds };
    const webhook =
      status === 'matched'
        ? webhookWrite(
            {
              issuerId: event.issuerId,
              type: 'qualified_settlement',
              sourceEventId: event.id,
              at,
              data: {
                chgId: event.chgId,
                transactionId: event.id,
                externalId: event.externalId,
                authorizationId: ctx.authorizationId,
                merchantId: ctx.merchant!.id,
                rewardEventIds,
                rewardGrantIds,
                currency: 'usd',
                earnedAmountMinor: cashbackMinor + brandedMinor,
                cashbackAmountMinor: cashbackMinor,
                brandedAmountMinor: brandedMinor,
                spentAmountMinor: spentMinor,
              } satisfies QualifiedSettlementData,
            },
            deps.relay?.claimMs,
          )
        : undefined;
    await writeBatch(tx, batch, ctx.accounts, {
      ctes: [
        Prisma.sql`event_outcome AS (
          UPDATE ingested_event SET reward_status = ${status}, merchant_id = ${decision.merchantId}, match_trace = ${JSON.stringify(trace)}::jsonb,
                 processed_at = ${at}, failure_reason = NULL
           WHERE id = ${event.id})`,
        ...(webhook ? [webhook.cte] : []),
      ],
      select: webhook ? [webhook.select] : [],
    });
    if (webhook) {
      written = writtenOutboxRows(
        {
          id: webhook.id,
          issuerId: event.issuerId,
          type: 'qualified_settlement',
          sourceEventId: event.id,
          data: webhook.data,
          createdAt: at,
        },
        ctx.endpoints,
      );
    }
    return { status, merchantId: decision.merchantId ?? undefined, webhookId: webhook?.id } satisfies StepOutcome;
  });
  // Committed: the accounts exist from now on, and the webhook goes to this process's relay.
  for (const id of lockedAccountIds) deps.knownAccounts?.add(id);
  for (const row of written) deps.relay?.take(row);
  // Test seam for crash safety: lets a test fail the activity after its commit.
  await deps.faults?.afterCommit?.('settleTransaction', input.eventId);
  return outcome;
}

/** The decision and every posting it makes, in the order the money moves. */
function planSettlement(ctx: DecisionContext, at: Date) {
  let decision = decideReward(ctx, at);
  const { event, merchant } = ctx;
  const batch = emptyBatch(event.issuerId, at);
  const rewardEventIds: string[] = [];
  const rewardGrantIds: string[] = [];
  if (!merchant) return { decision, batch, rewardEventIds, rewardGrantIds };
  const common = { chgId: event.chgId, merchantId: merchant.id, transactionId: event.id };
  const key = (what: string) => `settle:${event.id}:${what}`;

  if (decision.settlement.spentMinor > 0) {
    // Branded balance first, FIFO by expiry, from grants read under the branded account's lock.
    const allocations = drawAvailable(ctx, decision.settlement.spentMinor);
    const drawnMinor = sumMinor(allocations.map((a) => a.amountMinor));
    if (drawnMinor !== decision.settlement.spentMinor) decision = redecideAfterDraw(ctx, decision, drawnMinor, at);
    if (drawnMinor > 0) {
      const { transfer } = addPosting(batch, rewardEventIds, {
        common,
        amountMinor: drawnMinor,
        event: {
          idempotencyKey: key('branded_spent'),
          type: 'branded_spent',
          offerId: null,
          rewardGrantId: allocations[0].grantId,
          description: `Spent at ${merchant.name}`,
        },
        transfer: { idempotencyKey: key('spend'), kind: 'spend_branded' },
      });
      batch.draws.push(
        ...allocations.map((a) => ({ grantId: a.grantId, transferId: transfer.id, amountMinor: a.amountMinor })),
      );
    }
  }
  const { cashbackMinor, brandedMinor, winningOfferId } = decision.settlement;
  if (cashbackMinor > 0)
    planCashback(ctx, { batch, rewardEventIds, merchant, amountMinor: cashbackMinor, offerId: winningOfferId! });
  if (brandedMinor > 0) {
    const delayDays = Math.max(ctx.issuer.brandedAvailabilityDelayDays, merchant.brandedAvailabilityDelayDays);
    const grantId = newId('rg');
    const { transfer } = addPosting(batch, rewardEventIds, {
      common,
      amountMinor: brandedMinor,
      event: {
        idempotencyKey: key('branded_earned'),
        type: 'branded_earned',
        offerId: winningOfferId,
        rewardGrantId: grantId,
        description: `${merchant.name} balance earned`,
      },
      transfer: { idempotencyKey: key('earn_branded'), kind: 'earn_branded' },
    });
    batch.grants.push({
      id: grantId,
      chgId: event.chgId,
      merchantId: merchant.id,
      accountId: accounts.chgBranded(event.issuerId, event.chgId, merchant.id).id,
      earnTransferId: transfer.id,
      sourceTransactionId: event.id,
      amountMinor: brandedMinor,
      // Dated from the purchase, not from its processing: a late step gives the same dates.
      availableAt: new Date(ctx.asOf.getTime() + delayDays * DAY_MS),
      expiresAt: new Date(ctx.asOf.getTime() + merchant.brandedExpiryDays * DAY_MS),
    });
    rewardGrantIds.push(grantId);
  }
  return { decision, batch, rewardEventIds, rewardGrantIds };
}

/**
 * The purchase's cashback: earned, on hold for the return window counted from the purchase's own
 * date, and applied first to what the group owes.
 */
function planCashback(
  ctx: DecisionContext,
  cashback: {
    batch: PostingBatch;
    rewardEventIds: string[];
    merchant: ContextMerchant;
    amountMinor: number;
    offerId: string;
  },
): void {
  const { event } = ctx;
  const { batch, rewardEventIds, merchant, amountMinor, offerId } = cashback;
  const common = { chgId: event.chgId, merchantId: merchant.id, transactionId: event.id };
  const key = (what: string) => `settle:${event.id}:${what}`;
  const { transfer } = addPosting(batch, rewardEventIds, {
    common,
    amountMinor,
    event: {
      idempotencyKey: key('cashback_earned'),
      type: 'cashback_earned',
      offerId,
      description: `Cashback at ${merchant.name}`,
    },
    transfer: { idempotencyKey: key('earn_cashback'), kind: 'earn_cashback' },
  });
  const days = holdDays(ctx.returnPeriodDaysByOffer[offerId], ctx.issuer.cashbackHoldDays);
  batch.holds.push({
    transactionId: event.id,
    chgId: event.chgId,
    earnTransferId: transfer.id,
    amountMinor,
    payableAt: payableAt(ctx.asOf, days),
  });
  const owedMinor = ctx.accounts.get(accounts.chgCashbackOwed(event.issuerId, event.chgId).id)?.balanceMinor ?? 0;
  const repaidMinor = repaymentOf(amountMinor, owedMinor);
  if (repaidMinor > 0) {
    addPosting(batch, rewardEventIds, {
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
}

/** Up to `amountMinor` from the grants available at the purchase's date, the one expiring first first. */
function drawAvailable(ctx: DecisionContext, amountMinor: number): Allocation[] {
  const { asOf } = ctx;
  const available = ctx.grants.filter((g) => g.availableAt <= asOf && g.expiresAt > asOf).sort(compareFifo);
  return allocateDraw(
    available.map((g) => ({ grantId: g.id, remainingMinor: g.remainingMinor })),
    amountMinor,
  );
}
