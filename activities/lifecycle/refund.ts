// Refunds claw back what the purchase earned, in proportion to the refunded amount and
// never more than was earned (core/rules/settlement.ts, clawbackDue). Branded balance comes
// back from the grants the purchase created first. What those grants no longer hold (already
// spent or expired) is the shortfall: it is clawed back from the group's cashback balance
// (docs/decisions/0012-clawback-after-spend.md). Cashback comes back from the cashback balance.
// Whatever the balance cannot give (it was paid out, or a customer-service debit took it) is
// owed by the group (chg_cashback_owed): the merchant is credited in full, nothing is lost, and
// the group's later cashback repays it (docs/decisions/0038-cashback-paid-out.md). No balance
// ever goes negative. The purchase's cashback on hold shrinks by what is clawed back of it. A
// funded offer's issuer share and commission come back in proportion with the clawback, and the
// clawback goes back to the budget the purchase drew on. What approved claims credited to the
// purchase is its own reward too, and comes back in proportion, to the issuer that funded it
// (./claim-credits.ts).
// One database transaction per refund, with its reward_clawed_back webhook record.
import { newId } from '../../core/ids';
import { clawBackBranded, recordRewardEvent } from '../../core/domain/ledger';
import { postAccompanying, postNow } from './reward-posting';
import { returnDue } from '../../core/rules/funding';
import { clawbackDue } from '../../core/rules/settlement';
import { ACCOMPANYING_KINDS, accounts, fromDbMinor, type AccompanyingKind } from '../../core/ledger';
import { ensureAndLockAccounts } from '../../core/domain/ledger/accounts';
import type { ClawbackSplit } from '../../core/rules/cashback';
import { takeFromCashback } from './cashback-clawback';
import type { IngestedEvent, Prisma, RewardEvent } from '../../prisma/generated/client';
import { lockEvent } from './context';
import {
  progressAccounts,
  progressDue,
  undoProgress,
  type ProgressDue,
  type ProgressUndone,
} from './completion-clawback';
import { issuerClockAt } from '../issuer-clock';
import { storedOutcome } from './stored-outcome';
import { recordFactWebhooks } from '../../core/domain/webhook-records';
import { returnBudget } from '../../core/domain/budgets';
import { factKey } from '../../core/webhooks/fact-webhooks';
import type { LifecycleDeps } from './deps';
import type { StepInput, StepOutcome } from './types';
import {
  claimCreditAccounts,
  claimCreditsDueOf,
  claimCreditsOf,
  takeBackClaimCredits,
  type ClaimCredits,
  type ClaimCreditsTaken,
} from './claim-credits';

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
    const history = await purchaseHistory(tx, purchase, refund.id);
    const netAmountMinor = Math.max(
      0,
      fromDbMinor(purchase.amountMinor) - history.refundedBeforeMinor - fromDbMinor(refund.amountMinor),
    );
    const refundCase: RefundCase = {
      refund,
      purchase,
      at,
      history,
      credits: await claimCreditsOf(tx, purchase),
      netAmountMinor,
      progress: await progressDue(tx, purchase, netAmountMinor),
    };
    const returns = returnsDue(refundCase);
    const clawed = await postClawbacks(tx, refundCase, returns);
    clawed.returned = await postReturns(tx, refundCase, clawed, returns);
    // Last, after every account lock, as the settlement's write takes it: the budget row.
    clawed.budgetReturnedMinor = await giveBudgetBack(tx, refundCase, clawed);
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
  /** What approved claims credited to the purchase. */
  credits: ClaimCredits;
  /** The purchase's amount less every refund of it, this one included. */
  netAmountMinor: number;
  /** The cumulative offers whose measure the refund lowers (./completion-clawback.ts). */
  progress: ProgressDue[];
}

interface Clawed {
  cashbackDue: number;
  /** Taken from the group's cashback balance. */
  cashbackClawed: number;
  /** What the balance could not give: owed by the group. */
  cashbackOwed: number;
  brandedDue: number;
  brandedClawed: number;
  shortfallFromCashback: number;
  shortfallOwed: number;
  rewardEventIds: string[];
  /** Taken back of what approved claims credited to the purchase (to the issuer). */
  claims: ClaimCreditsTaken;
  /** Given back to the budget the purchase drew on (its offer's, in its period). */
  budgetReturnedMinor?: number;
  /** The issuer's share and the commission returned with this refund's clawback. */
  returned?: Returns;
  /** The cumulative offers' progress it lowered, and the completions it took back. */
  progress: ProgressUndone[];
  /** What was due of each offer's reward (a budget gets its offer's back). */
  offers: Array<{ offerId: string | null; cashbackDueMinor: number; brandedDueMinor: number }>;
}

/** What a refund returns of a funded offer's transfers: the issuer's share and the commission. */
interface Returns {
  issuerShareMinor: number;
  commissionMinor: number;
}

/**
 * The issuer's share and the commission the purchase was charged, returned in proportion to the
 * refunded amount, on cumulative amounts (core/rules/funding.ts): a full refund returns all.
 */
function returnsDue({ purchase, refund, history }: RefundCase): Returns {
  const due = (charged: number, returnedBefore: number) =>
    returnDue({
      chargedMinor: charged,
      purchaseAmountMinor: fromDbMinor(purchase.amountMinor),
      refundedBeforeMinor: history.refundedBeforeMinor,
      refundMinor: fromDbMinor(refund.amountMinor),
      returnedBeforeMinor: returnedBefore,
    });
  const f = history.funding;
  return {
    issuerShareMinor: due(f.issuerShareCharged, f.issuerShareReturned),
    commissionMinor: due(f.commissionCharged, f.commissionReturned),
  };
}

/**
 * Posts the returns with the refund's first clawback event, to which they belong. A refund that
 * clawed nothing back (its share of a small reward rounds to 0) returns nothing now: its amount
 * counts in the next refund's cumulative figures, and the refund that completes the purchase
 * always claws something back, so a full refund still returns everything.
 */
async function postReturns(tx: Tx, rc: RefundCase, clawed: Clawed, returns: Returns): Promise<Returns> {
  const rewardEventId = clawed.rewardEventIds[0];
  if (!rewardEventId) return { issuerShareMinor: 0, commissionMinor: 0 };
  const posting = postingOf(rc);
  const parts = [
    { amountMinor: returns.issuerShareMinor, kind: 'issuer_share_returned' },
    { amountMinor: returns.commissionMinor, kind: 'commission_returned' },
  ] as const;
  for (const part of parts) {
    if (part.amountMinor <= 0) continue;
    await postAccompanying(tx, posting.base, {
      common: posting.common,
      amountMinor: part.amountMinor,
      rewardEventId,
      transfer: { idempotencyKey: posting.key(part.kind), kind: part.kind },
    });
  }
  return returns;
}

/**
 * Posts what the refund takes back: cashback, then branded balance, then the shortfall from
 * cashback; then the same of what approved claims credited to the purchase.
 */
async function postClawbacks(tx: Tx, rc: RefundCase, returns: Returns): Promise<Clawed> {
  const { purchase, history } = rc;
  const refunds = {
    purchaseAmountMinor: fromDbMinor(purchase.amountMinor),
    refundedBeforeMinor: history.refundedBeforeMinor,
    refundMinor: fromDbMinor(rc.refund.amountMinor),
  };
  const due = (earned: number, clawed: number) =>
    clawbackDue({ ...refunds, earnedMinor: earned, clawedBackBeforeMinor: clawed });
  // Each offer's reward comes back in share on its own (offers stack), so that each keeps what its
  // own caps and budget count, and a full refund takes back exactly what each gave.
  const offers = history.offers.map((o) => ({
    ...o,
    cashbackDue: due(o.cashback.earned, o.cashback.clawed),
    brandedDue: due(o.branded.earned, o.branded.clawed),
  }));
  const cashbackDue = offers.reduce((sum, o) => sum + o.cashbackDue, 0);
  const brandedDue = offers.reduce((sum, o) => sum + o.brandedDue, 0);
  const claimsDue = claimCreditsDueOf(rc.credits, refunds);
  const posting = postingOf(rc);
  const rewardEventIds: string[] = [];
  // Every account a clawback may touch, created if missing and locked now, in the id order every
  // poster uses, so this cannot deadlock with a settlement or a payout.
  const ownAccounts =
    cashbackDue > 0 || brandedDue > 0
      ? [
          ...(brandedDue > 0 ? [accounts.chgBranded(purchase.issuerId, purchase.chgId, posting.merchantId)] : []),
          accounts.chgCashback(purchase.issuerId, purchase.chgId),
          accounts.chgCashbackOwed(purchase.issuerId, purchase.chgId),
          accounts.merchantReceivable(purchase.issuerId, posting.merchantId),
          ...(returns.issuerShareMinor > 0 ? [accounts.issuerFunding(purchase.issuerId)] : []),
          ...(returns.commissionMinor > 0 ? [accounts.commission(purchase.issuerId, posting.merchantId)] : []),
        ]
      : [];
  const toLock = [
    ...ownAccounts,
    ...claimCreditAccounts(purchase, claimsDue),
    ...progressAccounts(purchase, rc.progress),
  ];
  if (toLock.length > 0) await ensureAndLockAccounts(tx, toLock, rc.at);
  const { cashback, brandedClawed, shortfall } = await clawBackOwnRewards(tx, rc, posting, offers, rewardEventIds);
  const claims = await takeBackClaimCredits(
    tx,
    { refund: rc.refund, purchase, at: rc.at, merchantId: purchase.merchantId ?? '', key: posting.key },
    rc.credits,
    claimsDue,
    rewardEventIds,
  );
  // The hold covers the purchase's cashback and its claims' cashback credits alike.
  const heldTakenMinor = cashbackDue + claimsDue.cashbackMinor;
  if (heldTakenMinor > 0) await releaseHold(tx, purchase.id, heldTakenMinor, rc.at);
  const progress = await undoProgress(tx, rc, rc.progress, rewardEventIds);
  return {
    cashbackDue,
    cashbackClawed: cashback.fromBalanceMinor,
    cashbackOwed: cashback.owedMinor,
    brandedDue,
    brandedClawed,
    shortfallFromCashback: shortfall.fromBalanceMinor,
    shortfallOwed: shortfall.owedMinor,
    rewardEventIds,
    claims,
    progress,
    offers: offers.map((o) => ({ offerId: o.offerId, cashbackDueMinor: o.cashbackDue, brandedDueMinor: o.brandedDue })),
  };
}

type OfferDue = PurchaseHistory['offers'][number] & { cashbackDue: number; brandedDue: number };

/** Each offer's own reward back in share: cashback, then branded balance, then the shortfall from cashback. */
async function clawBackOwnRewards(
  tx: Tx,
  rc: RefundCase,
  posting: Posting,
  offers: OfferDue[],
  rewardEventIds: string[],
) {
  const own = { cashback: noSplit(), brandedClawed: 0, shortfall: noSplit() };
  for (const offer of offers) {
    // A purchase of one offer keeps the keys its clawbacks always had; stacked offers' are apart.
    const offerPosting = {
      ...posting,
      key: (what: string) => posting.key(offers.length > 1 ? `offer:${offer.offerId}:${what}` : what),
    };
    const cashback = await clawBackCashback(tx, rc, offerPosting, offer, rewardEventIds, 'cashback');
    const brandedClawed = offer.brandedDue > 0 ? await clawBackGrants(tx, rc, offerPosting, offer, rewardEventIds) : 0;
    const shortfall = await clawBackCashback(
      tx,
      rc,
      offerPosting,
      { ...offer, cashbackDue: offer.brandedDue - brandedClawed },
      rewardEventIds,
      'shortfall',
    );
    own.cashback = addSplit(own.cashback, cashback);
    own.brandedClawed += brandedClawed;
    own.shortfall = addSplit(own.shortfall, shortfall);
  }
  return own;
}

const noSplit = (): ClawbackSplit => ({ fromBalanceMinor: 0, owedMinor: 0 });
const addSplit = (a: ClawbackSplit, b: ClawbackSplit): ClawbackSplit => ({
  fromBalanceMinor: a.fromBalanceMinor + b.fromBalanceMinor,
  owedMinor: a.owedMinor + b.owedMinor,
});

/**
 * Cashback back from the group's balance as far as it reaches, the rest owed by the group; for
 * the purchase's own cashback, or for the branded value its grants no longer held (the shortfall,
 * marked so that the purchase's history counts it as branded value clawed back).
 */
async function clawBackCashback(
  tx: Tx,
  { refund }: RefundCase,
  posting: Posting,
  offer: { offerId: string | null; cashbackDue: number },
  rewardEventIds: string[],
  what: 'cashback' | 'shortfall',
): Promise<ClawbackSplit> {
  const shortfall = what === 'shortfall';
  return takeFromCashback(tx, posting.cashbackAccountId, offer.cashbackDue, (amountMinor, owed) => {
    const [suffix, kind] = owed ? (['_owed', 'clawback_cashback_owed'] as const) : (['', 'clawback_cashback'] as const);
    // The keys of the parts taken from the balance are those of the releases before money could be owed.
    const [eventKey, transferKey] = shortfall
      ? [`branded_shortfall_from_cashback${suffix}`, `clawback_cashback_for_branded${suffix}`]
      : [`cashback_clawed_back${suffix}`, kind];
    return postNow(
      tx,
      rewardEventIds,
      posting.base,
      {
        common: posting.common,
        amountMinor,
        event: {
          idempotencyKey: posting.key(eventKey),
          type: 'cashback_clawed_back',
          offerId: offer.offerId,
          sourceEventId: refund.id,
          description: describeClawback(shortfall, owed),
        },
        transfer: { idempotencyKey: posting.key(transferKey), kind },
      },
      shortfall ? { coversBrandedShortfall: true } : {},
    );
  });
}

function describeClawback(shortfall: boolean, owed: boolean): string {
  const what = shortfall ? 'Spent or expired balance reversed by a refund' : 'Cashback reversed by a refund';
  if (owed) return `${what}, owed: it was already paid out`;
  return shortfall ? `${what}, taken from cashback` : what;
}

/**
 * What the refund clawed back goes back to the budget the purchase's reward was taken from: the
 * period its settlement recorded in the match trace, whatever the offer's budget period is now.
 * Every clawback due is taken (from grants, cashback or as owed), and together they never exceed
 * what the purchase earned, which is what it took from the budget.
 */
async function giveBudgetBack(tx: Tx, { purchase, at }: RefundCase, clawed: Clawed): Promise<number> {
  const returns = new Map<string, { offerId: string; periodKey: string; amountMinor: number }>();
  const add = (use: { offerId: string; periodKey: string }, amountMinor: number) => {
    if (amountMinor === 0) return;
    const key = `${use.offerId} ${use.periodKey}`;
    const entry = returns.get(key) ?? { ...use, amountMinor: 0 };
    entry.amountMinor += amountMinor;
    returns.set(key, entry);
  };
  for (const use of budgetUsesOf(purchase)) {
    const offer = clawed.offers.find((o) => o.offerId === use.offerId);
    add(use, offer ? offer.cashbackDueMinor + offer.brandedDueMinor : 0);
  }
  // A completion taken back returns to the budget of the purchase that had earned it, whichever it is.
  for (const c of clawed.progress.flatMap((p) => p.clawed)) {
    const amountMinor = c.cashbackMinor + c.brandedMinor;
    if (amountMinor === 0 || !c.transactionId) continue;
    const earner =
      c.transactionId === purchase.id
        ? purchase
        : await tx.ingestedEvent.findUnique({ where: { id: c.transactionId } });
    const use = earner && budgetUsesOf(earner).find((u) => u.offerId === c.offerId);
    if (use) add(use, amountMinor);
  }
  // In the order the settlements lock budget rows: by offer, then period.
  const ordered = [...returns.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r);
  for (const r of ordered) await returnBudget(tx, { ...r, at });
  return ordered.reduce((sum, r) => sum + r.amountMinor, 0);
}

/**
 * The budgets the purchase drew on: its settlement's (one before offers stacked), and those of the
 * completions approved claims posted for it.
 */
function budgetUsesOf(purchase: IngestedEvent): Array<{ offerId: string; periodKey: string }> {
  type Use = { offerId: string; periodKey: string };
  const trace = purchase.matchTrace as {
    budgetUse?: Use | null;
    budgetUses?: Use[];
    claims?: Array<{ budgetUses?: Use[] }>;
  } | null;
  // Sorted by offer id, the order the settlement took the budget rows' locks in.
  const uses = [
    ...(trace?.budgetUses ?? (trace?.budgetUse ? [trace.budgetUse] : [])),
    ...(trace?.claims ?? []).flatMap((c) => c.budgetUses ?? []),
  ];
  return [...uses].sort((a, b) => (a.offerId < b.offerId ? -1 : a.offerId > b.offerId ? 1 : 0));
}

/** The purchase's cashback on hold shrinks by what the refund takes back of it. */
async function releaseHold(tx: Tx, purchaseId: string, clawedMinor: number, at: Date): Promise<void> {
  await tx.$executeRaw`
    UPDATE cashback_hold SET remaining_minor = remaining_minor - LEAST(remaining_minor, ${clawedMinor}), updated_at = ${at}
     WHERE transaction_id = ${purchaseId}`;
}

/** The reward_clawed_back event, in the refund's transaction, when it took anything back. */
async function recordClawbackWebhook(tx: Tx, rc: RefundCase, clawed: Clawed): Promise<void> {
  const { refund, purchase, at, credits } = rc;
  // A purchase the descriptor matched to no merchant has only what approved claims gave it to
  // take back: their credits and the completions they posted name the merchant the claim was about.
  const merchantId = purchase.merchantId ?? credits.merchantId ?? rc.progress[0]?.merchantId ?? null;
  if (clawed.rewardEventIds.length === 0 || !merchantId) return;
  await recordFactWebhooks(tx, [
    {
      issuerId: refund.issuerId,
      type: 'reward_clawed_back',
      factKey: factKey.rewardClawedBack(refund.id),
      sourceId: refund.id,
      at,
      data: {
        chgId: purchase.chgId,
        merchantId,
        transactionId: purchase.id,
        refundTransactionId: refund.id,
        currency: 'usd',
        // By the balance each came from: the shortfall of spent branded balance was taken
        // from cashback, and reward-detail lists it as cashback clawed back; what the group
        // could not give back is part of it, and owed.
        cashbackAmountMinor:
          clawed.cashbackClawed +
          clawed.cashbackOwed +
          clawed.shortfallFromCashback +
          clawed.shortfallOwed +
          takenFromCashback(clawed.claims) +
          completionsClawed(clawed, 'cashbackMinor'),
        brandedAmountMinor:
          clawed.brandedClawed + clawed.claims.brandedDrawnMinor + completionsClawed(clawed, 'brandedMinor'),
        owedMinor:
          clawed.cashbackOwed + clawed.shortfallOwed + owedOf(clawed.claims) + completionsClawed(clawed, 'owedMinor'),
        rewardEventIds: clawed.rewardEventIds,
      },
    },
  ]);
}

/** Cashback a refund took back of claims' credits, from the balance or as owed. */
const takenFromCashback = (c: ClaimCreditsTaken) =>
  c.cashback.fromBalanceMinor +
  c.cashback.owedMinor +
  c.brandedShortfall.fromBalanceMinor +
  c.brandedShortfall.owedMinor;
const owedOf = (c: ClaimCreditsTaken) => c.cashback.owedMinor + c.brandedShortfall.owedMinor;
/** What the refund took back of cumulative offers' completions, by part. */
const completionsClawed = (c: Clawed, part: 'cashbackMinor' | 'brandedMinor' | 'owedMinor') =>
  c.progress.reduce((sum, p) => sum + p.clawed.reduce((s, x) => s + x[part], 0), 0);

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
  { refund, at }: RefundCase,
  posting: Posting,
  offer: { offerId: string | null; brandedDue: number; grantIds: string[] },
  rewardEventIds: string[],
): Promise<number> {
  const rewardEventId = newId('brevt');
  const draw = await clawBackBranded(tx, {
    ...posting.base,
    merchantId: posting.merchantId,
    idempotencyKey: posting.key('clawback_branded'),
    rewardEventId,
    maxAmountMinor: offer.brandedDue,
    grantIds: offer.grantIds,
  });
  if (draw.drawnMinor > 0) {
    await recordRewardEvent(tx, {
      ...posting.base,
      id: rewardEventId,
      merchantId: posting.merchantId,
      offerId: offer.offerId,
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

/** The refund's outcome and trace; the purchase reads `reversed` once all it earned is back. */
async function recordRefundOutcome(tx: Tx, rc: RefundCase, clawed: Clawed): Promise<StepOutcome> {
  const { refund, purchase, at, history } = rc;
  const { cashbackDue, cashbackClawed, cashbackOwed, brandedDue, brandedClawed, rewardEventIds } = clawed;
  const { shortfallFromCashback, shortfallOwed } = clawed;
  const clawedTotal =
    history.cashback.clawed +
    history.branded.clawed +
    cashbackClawed +
    cashbackOwed +
    brandedClawed +
    shortfallFromCashback +
    shortfallOwed;
  const earnedTotal = history.cashback.earned + history.branded.earned;
  const claimCredited = [...rc.credits.cashback, ...rc.credits.branded].reduce((sum, c) => sum + c.amountMinor, 0);
  const claimsTaken = takenFromCashback(clawed.claims) + clawed.claims.brandedDrawnMinor;
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
      clawedNowMinor: cashbackClawed + cashbackOwed,
      owedMinor: cashbackOwed,
    },
    branded: {
      earnedMinor: history.branded.earned,
      clawedBeforeMinor: history.branded.clawed,
      dueMinor: brandedDue,
      clawedNowMinor: brandedClawed,
      shortfallFromCashbackMinor: shortfallFromCashback + shortfallOwed,
      shortfallOwedMinor: shortfallOwed,
    },
    formula: 'due = floor(earned x min(purchase, refunded so far) / purchase) - clawed before',
    claimCredits: {
      creditedMinor: claimCredited,
      clawedNowMinor: claimsTaken,
      owedMinor: owedOf(clawed.claims),
      formula:
        'due = floor(credit x (refunded so far - refunded when credited) / (purchase - refunded when credited)) - taken before',
    },
    // What was due of each offer's own reward (several when the merchant's offers stacked).
    offers: clawed.offers,
    // Each cumulative offer the purchase counted towards whose measure this refund lowered.
    progress: clawed.progress,
    budgetReturnedMinor: clawed.budgetReturnedMinor ?? 0,
    funding: {
      issuerShareReturnedMinor: clawed.returned?.issuerShareMinor ?? 0,
      commissionReturnedMinor: clawed.returned?.commissionMinor ?? 0,
    },
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

type OwnEvent = Pick<RewardEvent, 'type' | 'offerId' | 'amountMinor' | 'coversBrandedShortfall' | 'rewardGrantId'>;

/** The amount of the events of a type (those covering a branded shortfall, or the others). */
const sumOf =
  (events: OwnEvent[]) =>
  (type: string, shortfall = false) =>
    events
      .filter((e) => e.type === type && e.coversBrandedShortfall === shortfall)
      .reduce((s, e) => s + fromDbMinor(e.amountMinor), 0);

/**
 * What each offer gave the purchase and what refunds took back of it, by offer id (one offer,
 * unless the merchant's offers stack): a refund claws each back in share.
 */
function offersOf(events: OwnEvent[]) {
  // By offer id; an earn without one (none is written so) still comes back, as its own.
  const ids = [...new Set(events.filter((e) => EARNED.includes(e.type)).map((e) => e.offerId))].sort();
  return ids.map((offerId) => {
    const own = events.filter((e) => e.offerId === offerId);
    const sum = sumOf(own);
    return {
      offerId,
      cashback: { earned: sum('cashback_earned'), clawed: sum('cashback_clawed_back') },
      branded: {
        earned: sum('branded_earned'),
        clawed: sum('branded_clawed_back') + sum('cashback_clawed_back', true),
      },
      grantIds: own.filter((e) => e.type === 'branded_earned' && e.rewardGrantId).map((e) => e.rewardGrantId!),
    };
  });
}
const EARNED = ['cashback_earned', 'branded_earned'];

async function purchaseHistory(tx: Tx, purchase: IngestedEvent, refundId: string) {
  const purchaseId = purchase.id;
  // A cumulative offer's completion the purchase reached is not its own reward: refunds take it
  // back only when the group's measure falls below it (./completion-clawback.ts).
  const all = await tx.rewardEvent.findMany({ where: { transactionId: purchaseId }, orderBy: { occurredAt: 'asc' } });
  const events = all.filter((e) => e.completion === null);
  const completionEventIds = all.filter((e) => e.completion !== null).map((e) => e.id);
  const sum = sumOf(events);
  // A refund stored in another currency took nothing back (recordCurrencyMismatch): counting its
  // amount would make the next refund take back more than its share.
  const refunds = await tx.ingestedEvent.findMany({
    where: {
      issuerId: purchase.issuerId,
      relatedEventId: purchaseId,
      kind: 'settled',
      state: 'refunded',
      currency: purchase.currency,
      processedAt: { not: null },
      id: { not: refundId },
    },
    select: { amountMinor: true },
  });
  // The funded offers' transfers of the purchase, charged and returned so far: its own reward's,
  // not its completions' (a completion returns its issuer's share whole when it comes back).
  const accompanying = await tx.ledgerTransfer.groupBy({
    by: ['kind'],
    where: {
      issuerId: purchase.issuerId,
      transactionId: purchaseId,
      kind: { in: [...ACCOMPANYING_KINDS] },
      ...(completionEventIds.length > 0
        ? { OR: [{ rewardEventId: null }, { rewardEventId: { notIn: completionEventIds } }] }
        : {}),
    },
    _sum: { amountMinor: true },
  });
  const charged = (...kinds: AccompanyingKind[]) =>
    accompanying
      .filter((t) => (kinds as string[]).includes(t.kind))
      .reduce((s, t) => s + fromDbMinor(t._sum.amountMinor ?? 0n), 0);
  return {
    funding: {
      issuerShareCharged: charged('issuer_share_cashback', 'issuer_share_branded'),
      issuerShareReturned: charged('issuer_share_returned'),
      commissionCharged: charged('commission_charged'),
      commissionReturned: charged('commission_returned'),
    },
    cashback: { earned: sum('cashback_earned'), clawed: sum('cashback_clawed_back') },
    branded: {
      earned: sum('branded_earned'),
      clawed: sum('branded_clawed_back') + sum('cashback_clawed_back', true),
    },
    offers: offersOf(events),
    refundedBeforeMinor: refunds.reduce((s, r) => s + fromDbMinor(r.amountMinor), 0),
  };
}
