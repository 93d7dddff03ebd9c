// Refunds claw back what the purchase earned, in proportion to the refunded amount and
// never more than was earned (core/rules/settlement.ts, clawbackDue). Branded balance comes
// back from the grants the purchase created first. What those grants no longer hold (already
// spent or expired) is the shortfall: it is clawed back from the group's cashback balance as
// far as that balance reaches, and only the rest is recorded in the trace as unrecoverable (the
// merchant bears it). Cashback comes back as far as the cashback balance reaches too (a
// customer-service debit may have taken it); the rest is unrecoverable in the same way. No
// balance ever goes negative. See docs/decisions/0012-clawback-after-spend.md.
// One database transaction per refund, with its reward_clawed_back webhook record.
import { newId } from '../../core/ids';
import { clawBackBranded, recordRewardEvent } from '../../core/domain/ledger';
import { postNow } from './reward-posting';
import { clawbackDue } from '../../core/rules/settlement';
import { accounts, fromDbMinor } from '../../core/ledger';
import { lockAccounts } from '../../core/domain/ledger/accounts';
import type { IngestedEvent, Prisma } from '../../prisma/generated/client';
import { lockEvent } from './context';
import { issuerClockAt } from '../issuer-clock';
import { storedOutcome } from './stored-outcome';
import { recordRewardEventWebhooks } from '../../core/domain/webhook-records';
import { factKey } from '../../core/webhooks/reward-events';
import type { LifecycleDeps } from './deps';
import type { StepInput, StepOutcome } from './types';

type Tx = Prisma.TransactionClient;

export async function clawBackRefund(deps: LifecycleDeps, input: StepInput): Promise<StepOutcome> {
  const workflowAt = input.atMs !== undefined ? new Date(input.atMs) : deps.clock.now();
  const outcome = await deps.db.$transaction(async (tx) => {
    const refund = await lockEvent(tx, input.eventId);
    if (refund.processedAt) return storedOutcome(tx, refund);
    // Clawbacks are dated on the issuer's clock, as the earnings they reverse (a sandbox test
    // clock); refunds are rare, so this one extra statement is not worth folding in.
    const at = await issuerClockAt(tx, refund.issuerId, workflowAt);
    // Lock the purchase too: two refunds of one purchase are clawed back one after the other.
    const purchase = await lockEvent(tx, refund.relatedEventId!);
    if (!purchase.processedAt) return { status: 'waiting_for_purchase' } satisfies StepOutcome;
    // Ingestion refuses such a refund; one stored before that rule claws back nothing rather
    // than read one currency's minor units as another's.
    if (refund.currency !== purchase.currency) return recordCurrencyMismatch(tx, refund, purchase, at);
    const refundCase: RefundCase = { refund, purchase, at, history: await purchaseHistory(tx, purchase.id, refund.id) };
    const clawed = await postClawbacks(tx, refundCase);
    await recordClawbackWebhook(tx, refundCase, clawed);
    return recordRefundOutcome(tx, refundCase, clawed);
  });
  await deps.faults?.afterCommit?.('clawBackRefund', input.eventId);
  return outcome;
}

interface RefundCase {
  refund: IngestedEvent;
  purchase: IngestedEvent;
  at: Date;
  history: PurchaseHistory;
}

interface Clawed {
  cashbackDue: number;
  /** At most the group's cashback balance: cashback already spent by an adjustment is not owed back. */
  cashbackClawed: number;
  brandedDue: number;
  brandedClawed: number;
  shortfallFromCashback: number;
  rewardEventIds: string[];
}

/** Posts what the refund takes back: cashback, then branded balance, then the shortfall from cashback. */
async function postClawbacks(tx: Tx, rc: RefundCase): Promise<Clawed> {
  const { refund, purchase, history } = rc;
  const due = (earned: number, clawed: number) =>
    clawbackDue({
      earnedMinor: earned,
      purchaseAmountMinor: fromDbMinor(purchase.amountMinor),
      refundedBeforeMinor: history.refundedBeforeMinor,
      refundMinor: fromDbMinor(refund.amountMinor),
      clawedBackBeforeMinor: clawed,
    });
  const cashbackDue = due(history.cashback.earned, history.cashback.clawed);
  const brandedDue = due(history.branded.earned, history.branded.clawed);
  const posting = postingOf(rc);
  const rewardEventIds: string[] = [];
  // The shortfall may touch the cashback account after the branded one: take every lock now,
  // in the id order every poster uses, so this cannot deadlock with a settlement.
  const locked =
    cashbackDue > 0 || brandedDue > 0
      ? await lockAccounts(tx, [
          ...(brandedDue > 0 ? [accounts.chgBranded(purchase.issuerId, purchase.chgId, posting.merchantId).id] : []),
          posting.cashbackAccountId,
          accounts.merchantReceivable(purchase.issuerId, posting.merchantId).id,
        ])
      : undefined;
  // As far as the balance reaches (a customer-service debit may have taken the rest); what it
  // cannot take is recorded as unrecoverable, as for spent branded balance (decision 0012).
  const cashbackClawed = Math.min(cashbackDue, locked?.get(posting.cashbackAccountId)?.balanceMinor ?? 0);
  if (cashbackClawed > 0) {
    await postNow(tx, rewardEventIds, posting.base, {
      common: posting.common,
      amountMinor: cashbackClawed,
      event: {
        idempotencyKey: posting.key('cashback_clawed_back'),
        type: 'cashback_clawed_back',
        offerId: history.cashback.offerId,
        sourceEventId: refund.id,
        description: 'Cashback reversed by a refund',
      },
      transfer: { idempotencyKey: posting.key('clawback_cashback'), kind: 'clawback_cashback' },
    });
  }
  const brandedClawed = brandedDue > 0 ? await clawBackGrants(tx, rc, posting, brandedDue, rewardEventIds) : 0;
  const shortfallFromCashback =
    brandedDue > brandedClawed
      ? await takeShortfallFromCashback(tx, rc, posting, brandedDue - brandedClawed, rewardEventIds)
      : 0;
  return { cashbackDue, cashbackClawed, brandedDue, brandedClawed, shortfallFromCashback, rewardEventIds };
}

/** The reward_clawed_back event, in the refund's transaction, when it took anything back. */
async function recordClawbackWebhook(tx: Tx, { refund, purchase, at }: RefundCase, clawed: Clawed): Promise<void> {
  if (clawed.rewardEventIds.length === 0) return;
  await recordRewardEventWebhooks(tx, [
    {
      issuerId: refund.issuerId,
      type: 'reward_clawed_back',
      factKey: factKey.rewardClawedBack(refund.id),
      sourceId: refund.id,
      at,
      data: {
        chgId: purchase.chgId,
        merchantId: purchase.merchantId!,
        transactionId: purchase.id,
        refundTransactionId: refund.id,
        currency: 'usd',
        // By the balance each came from: the shortfall of spent branded balance was taken
        // from cashback, and reward-detail lists it as cashback clawed back.
        cashbackAmountMinor: clawed.cashbackClawed + clawed.shortfallFromCashback,
        brandedAmountMinor: clawed.brandedClawed,
        rewardEventIds: clawed.rewardEventIds,
      },
    },
  ]);
}

type Posting = ReturnType<typeof postingOf>;

/** What every clawback of this refund is posted with: the purchase's group and merchant, keys by the refund. */
function postingOf({ refund, purchase, at }: RefundCase) {
  const merchantId = purchase.merchantId!;
  return {
    merchantId,
    base: { issuerId: purchase.issuerId, chgId: purchase.chgId, transactionId: purchase.id, at },
    common: { chgId: purchase.chgId, merchantId, transactionId: purchase.id },
    key: (what: string) => `refund:${refund.id}:${what}`,
    cashbackAccountId: accounts.chgCashback(purchase.issuerId, purchase.chgId).id,
  };
}

/** Branded balance back from the grants the purchase created, as far as they still hold it. */
async function clawBackGrants(
  tx: Tx,
  { refund, at, history }: RefundCase,
  posting: Posting,
  dueMinor: number,
  rewardEventIds: string[],
): Promise<number> {
  const rewardEventId = newId('brevt');
  const draw = await clawBackBranded(tx, {
    ...posting.base,
    merchantId: posting.merchantId,
    idempotencyKey: posting.key('clawback_branded'),
    rewardEventId,
    maxAmountMinor: dueMinor,
    grantIds: history.grantIds,
  });
  if (draw.drawnMinor > 0) {
    await recordRewardEvent(tx, {
      ...posting.base,
      id: rewardEventId,
      merchantId: posting.merchantId,
      offerId: history.branded.offerId,
      sourceEventId: refund.id,
      idempotencyKey: posting.key('branded_clawed_back'),
      type: 'branded_clawed_back',
      amountMinor: draw.drawnMinor,
      rewardGrantId: draw.allocations[0]?.grantId ?? null,
      description: 'Balance reversed by a refund',
      occurredAt: at,
    });
    rewardEventIds.push(rewardEventId);
  }
  return draw.drawnMinor;
}

/** What the grants no longer held, from the group's cashback as far as it reaches. */
async function takeShortfallFromCashback(
  tx: Tx,
  { refund, history }: RefundCase,
  posting: Posting,
  missingMinor: number,
  rewardEventIds: string[],
): Promise<number> {
  const cashbackBalance =
    (await lockAccounts(tx, [posting.cashbackAccountId])).get(posting.cashbackAccountId)?.balanceMinor ?? 0;
  const shortfallMinor = Math.min(missingMinor, cashbackBalance);
  if (shortfallMinor <= 0) return 0;
  // Marked as covering the branded shortfall: the purchase's history counts it as branded
  // value clawed back, not as its cashback (purchaseHistory).
  await postNow(
    tx,
    rewardEventIds,
    posting.base,
    {
      common: posting.common,
      amountMinor: shortfallMinor,
      event: {
        idempotencyKey: posting.key('branded_shortfall_from_cashback'),
        type: 'cashback_clawed_back',
        offerId: history.branded.offerId,
        sourceEventId: refund.id,
        description: 'Spent or expired balance reversed by a refund, taken from cashback',
      },
      transfer: { idempotencyKey: posting.key('clawback_cashback_for_branded'), kind: 'clawback_cashback' },
    },
    { coversBrandedShortfall: true },
  );
  return shortfallMinor;
}

/** The refund's outcome and trace; the purchase reads `reversed` once all it earned is back. */
async function recordRefundOutcome(
  tx: Tx,
  { refund, purchase, at, history }: RefundCase,
  clawed: Clawed,
): Promise<StepOutcome> {
  const { cashbackDue, cashbackClawed, brandedDue, brandedClawed, shortfallFromCashback, rewardEventIds } = clawed;
  const clawedTotal =
    history.cashback.clawed + history.branded.clawed + cashbackClawed + brandedClawed + shortfallFromCashback;
  const earnedTotal = history.cashback.earned + history.branded.earned;
  const status = rewardEventIds.length > 0 ? 'matched' : 'not_matched';
  const trace = {
    evaluatedAt: at.toISOString(),
    refund: {
      amountMinor: fromDbMinor(refund.amountMinor),
      purchaseTransactionId: purchase.id,
      purchaseAmountMinor: fromDbMinor(purchase.amountMinor),
      refundedBeforeMinor: history.refundedBeforeMinor,
    },
    cashback: {
      earnedMinor: history.cashback.earned,
      clawedBeforeMinor: history.cashback.clawed,
      dueMinor: cashbackDue,
      clawedNowMinor: cashbackClawed,
      unrecoverableMinor: cashbackDue - cashbackClawed,
    },
    branded: {
      earnedMinor: history.branded.earned,
      clawedBeforeMinor: history.branded.clawed,
      dueMinor: brandedDue,
      clawedNowMinor: brandedClawed,
      shortfallFromCashbackMinor: shortfallFromCashback,
      unrecoverableMinor: brandedDue - brandedClawed - shortfallFromCashback,
    },
    formula: 'due = floor(earned x min(purchase, refunded so far) / purchase) - clawed before',
    outcome: status,
    rewardEventIds,
  };
  await markRefundProcessed(tx, refund, purchase, { status, trace, at });
  if (earnedTotal > 0 && clawedTotal >= earnedTotal) {
    await tx.ingestedEvent.update({ where: { id: purchase.id }, data: { rewardStatus: 'reversed' } });
  }
  return { status, merchantId: purchase.merchantId ?? undefined } satisfies StepOutcome;
}

/** The refund's outcome and trace, stored on the refund; it is processed from then on. */
async function markRefundProcessed(
  tx: Tx,
  refund: IngestedEvent,
  purchase: IngestedEvent,
  outcome: { status: 'matched' | 'not_matched'; trace: object; at: Date },
): Promise<void> {
  await tx.ingestedEvent.update({
    where: { id: refund.id },
    data: {
      rewardStatus: outcome.status,
      merchantId: purchase.merchantId,
      matchTrace: outcome.trace as Prisma.InputJsonValue,
      processedAt: outcome.at,
      failureReason: null,
    },
  });
}

async function recordCurrencyMismatch(
  tx: Tx,
  refund: IngestedEvent,
  purchase: IngestedEvent,
  at: Date,
): Promise<StepOutcome> {
  const trace = {
    evaluatedAt: at.toISOString(),
    refund: {
      amountMinor: fromDbMinor(refund.amountMinor),
      currency: refund.currency,
      purchaseTransactionId: purchase.id,
      purchaseCurrency: purchase.currency,
    },
    formula: 'nothing clawed back: the refund and its purchase are in different currencies',
    outcome: 'not_matched',
    rewardEventIds: [],
  };
  await markRefundProcessed(tx, refund, purchase, { status: 'not_matched', trace, at });
  return { status: 'not_matched', merchantId: purchase.merchantId ?? undefined } satisfies StepOutcome;
}

type PurchaseHistory = Awaited<ReturnType<typeof purchaseHistory>>;

async function purchaseHistory(tx: Tx, purchaseId: string, refundId: string) {
  const events = await tx.rewardEvent.findMany({
    where: { transactionId: purchaseId },
    orderBy: { occurredAt: 'asc' },
  });
  const sum = (type: string, shortfall = false) =>
    events
      .filter((e) => e.type === type && e.coversBrandedShortfall === shortfall)
      .reduce((s, e) => s + fromDbMinor(e.amountMinor), 0);
  const refunds = await tx.ingestedEvent.findMany({
    where: {
      relatedEventId: purchaseId,
      kind: 'settled',
      state: 'refunded',
      processedAt: { not: null },
      id: { not: refundId },
    },
    select: { amountMinor: true },
  });
  return {
    cashback: {
      earned: sum('cashback_earned'),
      clawed: sum('cashback_clawed_back'),
      offerId: events.find((e) => e.type === 'cashback_earned')?.offerId ?? null,
    },
    branded: {
      earned: sum('branded_earned'),
      clawed: sum('branded_clawed_back') + sum('cashback_clawed_back', true),
      offerId: events.find((e) => e.type === 'branded_earned')?.offerId ?? null,
    },
    grantIds: events.filter((e) => e.type === 'branded_earned' && e.rewardGrantId).map((e) => e.rewardGrantId!),
    refundedBeforeMinor: refunds.reduce((s, r) => s + fromDbMinor(r.amountMinor), 0),
  };
}
