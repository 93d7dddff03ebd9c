// Settlement: the final reward effects of a purchase, all in ONE database transaction —
// spend of branded balance, earn transfers, reward events, the grant, the decision record
// and the qualified_settlement webhook record. Either all of it is committed or none; a
// retry after a commit finds the event processed and returns what was posted.
// Four statements on the usual path (context.ts reads, core/domain/ledger/batch.ts writes):
// lock the event and read its context, lock the purchase's accounts, read the merchant's
// terms, budgets and the group's balances, write every effect (the budget's use last, only if
// it still fits: else the whole transaction is decided again, docs/decisions/0039-offer-budgets.md).
import { accounts, allocateDraw, compareFifo, purchaseLockOrder, sumMinor, type Allocation } from '../../core/ledger';
import { Prisma } from '../../prisma/generated/client';
import { sqlTransaction, type SqlTx } from '../../prisma/sql-transaction';
import { accountsOf, emptyBatch, writeBatch, type PostingBatch } from '../../core/domain/ledger/batch';
import { addPosting } from './reward-posting';
import { addBranded, addCashback, addCompletions, addFunding, termsOf, type EarnPlan } from './earn-posting';
import { ensureUsedAccounts } from '../../core/domain/ledger/accounts';
import { commissionOf } from '../../core/rules/funding';
import { completedOf } from '../../core/rules/progress';
import { progressWriteCtes } from '../../core/domain/offer-progress';
import { webhookWrite } from '../../core/domain/webhook-records';
import { writtenOutboxRows, type OutboxRow } from '../webhooks/outbox';
import { lockEventWithContext, type DecisionContext } from './context';
import type { QualifiedSettlementData } from '../../core/webhooks/payloads';
import { budgetUsesOf, decideReward, redecideAfterDraw, type RewardDecision } from './decide';
import { BudgetRaceLost } from '../../core/domain/budgets';
import { budgetRetries } from '../../core/metrics';
import { storedOutcome } from './stored-outcome';
import { merchantHistoryCte } from './merchant-history';
import type { LifecycleDeps } from './deps';
import type { StepInput, StepOutcome } from './types';

/**
 * Decisions taken again, in this activity, when the budget they drew on moved meanwhile. Each loss
 * means another settlement of the offer committed (the guard waits for the row's lock), so the
 * next attempt reads a newer budget; past this many the activity fails and Temporal retries it.
 */
export const BUDGET_ATTEMPTS = 20;

export async function settleTransaction(deps: LifecycleDeps, input: StepInput): Promise<StepOutcome> {
  await deps.faults?.beforeActivity?.('settleTransaction', input.eventId);
  for (let attempt = 1; ; attempt++) {
    try {
      return await settleOnce(deps, input);
    } catch (err) {
      if (!(err instanceof BudgetRaceLost) || attempt >= BUDGET_ATTEMPTS) throw err;
      budgetRetries.inc();
    }
  }
}

async function settleOnce(deps: LifecycleDeps, input: StepInput): Promise<StepOutcome> {
  const workflowAt = input.atMs !== undefined ? new Date(input.atMs) : deps.clock.now();
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
    const { decision, batch, rewardEventIds, rewardGrantIds } = planSettlement(ctx, at);
    lockedAccountIds = await accountsToWrite(tx, ctx, batch, at, deps);
    const status = rewardEventIds.length > 0 ? 'matched' : 'not_matched';
    const trace = { ...decision.trace, outcome: status, rewardEventIds, rewardGrantIds };
    const webhook =
      status === 'matched'
        ? webhookWrite(qualifiedSettlement(ctx, decision, { at, rewardEventIds, rewardGrantIds }), deps.relay?.claimMs)
        : undefined;
    const history = merchantHistoryCte(ctx);
    await writeBatch(tx, batch, ctx.accounts, {
      ctes: [
        Prisma.sql`event_outcome AS (
          UPDATE ingested_event SET reward_status = ${status}, merchant_id = ${decision.merchantId}, match_trace = ${JSON.stringify(trace)}::jsonb,
                 processed_at = ${at}, failure_reason = NULL
           WHERE id = ${event.id})`,
        ...(webhook ? [webhook.cte] : []),
        ...(history ? [history] : []),
        ...progressWriteCtes(decision.progress, {
          issuerId: event.issuerId,
          chgId: event.chgId,
          transactionId: event.id,
          at,
        }),
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

/** The qualified_settlement webhook of a rewarded purchase: its own reward and its completions'. */
function qualifiedSettlement(
  ctx: DecisionContext,
  decision: RewardDecision,
  p: { at: Date; rewardEventIds: string[]; rewardGrantIds: string[] },
) {
  const { event } = ctx;
  const completed = completedOf(decision.progress);
  const cashbackMinor = decision.settlement.cashbackMinor + completed.cashbackMinor;
  const brandedMinor = decision.settlement.brandedMinor + completed.brandedMinor;
  return {
    issuerId: event.issuerId,
    type: 'qualified_settlement' as const,
    sourceEventId: event.id,
    at: p.at,
    data: {
      chgId: event.chgId,
      transactionId: event.id,
      externalId: event.externalId,
      authorizationId: ctx.authorizationId,
      merchantId: ctx.merchant!.id,
      rewardEventIds: p.rewardEventIds,
      rewardGrantIds: p.rewardGrantIds,
      currency: 'usd',
      earnedAmountMinor: cashbackMinor + brandedMinor,
      cashbackAmountMinor: cashbackMinor,
      brandedAmountMinor: brandedMinor,
      spentAmountMinor: decision.settlement.spentMinor,
    } satisfies QualifiedSettlementData,
  };
}

/**
 * The ids of the accounts the settlement holds once it commits: those created and locked up
 * front, and those created only when a posting uses them (the merchant's commission, the issuer's
 * funding account), created now if this batch uses them.
 */
async function accountsToWrite(
  tx: SqlTx,
  ctx: DecisionContext,
  batch: PostingBatch,
  at: Date,
  deps: LifecycleDeps,
): Promise<string[]> {
  if (!ctx.merchant) return [];
  const { createdWhenUsed } = purchaseLockOrder(ctx.event.issuerId, ctx.event.chgId, ctx.merchant.id);
  const whenUsed = new Set(createdWhenUsed.map((r) => r.id));
  const used = await ensureUsedAccounts(tx, createdWhenUsed, accountsOf(batch), at, deps.knownAccounts);
  return [...[...ctx.accounts.keys()].filter((id) => !whenUsed.has(id)), ...used];
}

/** The decision and every posting it makes, in the order the money moves. */
function planSettlement(ctx: DecisionContext, at: Date) {
  let decision = decideReward(ctx, at);
  const { event, merchant } = ctx;
  const batch = emptyBatch(event.issuerId, at);
  const rewardEventIds: string[] = [];
  const rewardGrantIds: string[] = [];
  if (!merchant) return { decision, batch, rewardEventIds, rewardGrantIds };
  const plan: EarnPlan = {
    ctx,
    merchant,
    batch,
    rewardEventIds,
    rewardGrantIds,
    common: { chgId: event.chgId, merchantId: merchant.id, transactionId: event.id },
    key: (what: string) => `settle:${event.id}:${what}`,
    owedLeftMinor: ctx.accounts.get(accounts.chgCashbackOwed(event.issuerId, event.chgId).id)?.balanceMinor ?? 0,
  };
  if (decision.settlement.spentMinor > 0) {
    // Branded balance first, FIFO by expiry, from grants read under the branded account's lock.
    const allocations = drawAvailable(ctx, decision.settlement.spentMinor);
    const drawnMinor = sumMinor(allocations.map((a) => a.amountMinor));
    if (drawnMinor !== decision.settlement.spentMinor) decision = redecideAfterDraw(ctx, decision, drawnMinor, at);
    if (drawnMinor > 0) addSpend(plan, allocations, drawnMinor);
  }
  const { applied: offers, eligibleAmountMinor } = decision.settlement;
  // One sale, one commission: the merchant pays that of the first-ranked offer which charges one.
  const charging = offers.find((a) => commissionOf(eligibleAmountMinor, termsOf(ctx, a.offerId)) > 0);
  offers.forEach((applied, i) => {
    // The first offer's rows keep the keys a purchase's one reward always had.
    const prefix = i === 0 ? '' : `offer:${applied.offerId}:`;
    const own = { offerId: applied.offerId, prefix, completion: null };
    const earnEvents = {
      cashback: addCashback(plan, { ...own, amountMinor: applied.reward.cashbackMinor }),
      branded: addBranded(plan, { ...own, amountMinor: applied.reward.brandedMinor }),
    };
    const commissionOnMinor = applied === charging ? eligibleAmountMinor : 0;
    addFunding(batch, ctx, applied, {
      common: plan.common,
      key: (what) => plan.key(prefix + what),
      earnEvents,
      commissionOnMinor,
    });
  });
  batch.budgetUses = budgetUsesOf(ctx, decision);
  for (const step of decision.progress) addCompletions(plan, step);
  return { decision, batch, rewardEventIds, rewardGrantIds };
}

function addSpend(plan: EarnPlan, allocations: Allocation[], drawnMinor: number): void {
  const { transfer } = addPosting(plan.batch, plan.rewardEventIds, {
    common: plan.common,
    amountMinor: drawnMinor,
    event: {
      idempotencyKey: plan.key('branded_spent'),
      type: 'branded_spent',
      offerId: null,
      rewardGrantId: allocations[0].grantId,
      description: `Spent at ${plan.merchant.name}`,
    },
    transfer: { idempotencyKey: plan.key('spend'), kind: 'spend_branded' },
  });
  plan.batch.draws.push(
    ...allocations.map((a) => ({ grantId: a.grantId, transferId: transfer.id, amountMinor: a.amountMinor })),
  );
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
