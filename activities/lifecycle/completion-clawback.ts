// A refund's part on cumulative offers (API.md, Offer mechanics, Refunds undo progress): the
// refunded purchase adds less to the group's measure (its net amount, or nothing once it falls
// below the offer's minimum), and each completion the measure no longer reaches gives its reward
// back, the latest first, whichever purchase earned it. A completion's reward comes back whole,
// by the same rules as a purchase's own: cashback from the group's balance as far as it reaches
// and the rest owed; branded balance from the completion's grant, what that no longer holds from
// cashback; the completing purchase's hold shrinks by its cashback. The progress rows move in the
// same transaction, under the group's account locks, so progress never disagrees with the ledger.
import { newId } from '../../core/ids';
import { accounts, fromDbMinor, type AccountRef } from '../../core/ledger';
import { clawBackBranded, recordRewardEvent } from '../../core/domain/ledger';
import { takeFromCashback } from './cashback-clawback';
import { contributionOf, isCumulative, type CumulativeReward } from '../../core/rules/reward-kinds';
import { progressOnRefund, type CumulativeTerms, type StoredProgress } from '../../core/rules/progress';
import { contributionsOf, storedProgress, writeRefundProgress } from '../../core/domain/offer-progress';
import { postAccompanying, postNow, type RewardPosting } from './reward-posting';
import type { IngestedEvent, Prisma } from '../../prisma/generated/client';

type Tx = Prisma.TransactionClient;

/** A cumulative offer whose measure the refund lowers. */
export interface ProgressDue {
  terms: CumulativeTerms;
  /** The offer's merchant: the purchase's, or the one an approved claim counted it at (the
   *  matcher missed it, and the purchase names none). */
  merchantId: string;
  contributed: number;
  /** The offer is funded in part by the issuer: a completion's clawback returns its share. */
  issuerShare: boolean;
}

/** What the refund took back of one completion, by the balance each part came from. */
export interface CompletionClawed {
  offerId: string;
  completion: number;
  /** From the group's cashback (a cashback reward, or branded value its grant no longer held), owed included. */
  cashbackMinor: number;
  /** From the completion's grant. */
  brandedMinor: number;
  /** Of the cashback part: what the group could not give, owed. */
  owedMinor: number;
  /** The purchase that had earned it (its budget use gets the clawback back). */
  transactionId: string | null;
  /** The issuer's share of it returned (a funded offer). */
  issuerShareReturnedMinor: number;
}

export interface ProgressUndone {
  offerId: string;
  contributionBefore: number;
  contributionAfter: number;
  before: StoredProgress;
  after: StoredProgress;
  clawed: CompletionClawed[];
}

/**
 * The cumulative offers the purchase counts towards that its net amount after this refund adds
 * less to. Read before any account lock: only this purchase's settlement and refunds (which hold
 * its event's lock) write its contributions.
 */
export async function progressDue(tx: Tx, purchase: IngestedEvent, netAmountMinor: number): Promise<ProgressDue[]> {
  const contributions = await contributionsOf(tx, purchase.id);
  if (contributions.length === 0) return [];
  const offers = await tx.offer.findMany({ where: { id: { in: contributions.map((c) => c.offerId) } } });
  const due: ProgressDue[] = [];
  for (const c of contributions) {
    const offer = offers.find((o) => o.id === c.offerId)!;
    const reward = offer.reward as CumulativeReward | null;
    if (!reward || !isCumulative(reward)) continue;
    const terms: CumulativeTerms = {
      offerId: offer.id,
      reward,
      minSpendMinor: fromDbMinor(offer.minSpendMinor),
      maxRedemptionsPerChg: offer.maxRedemptionsPerChg,
      maxRewardMinor: offer.maxRewardMinor === null ? null : fromDbMinor(offer.maxRewardMinor),
    };
    if (contributionOf(reward, netAmountMinor, terms.minSpendMinor) < c.contributed)
      due.push({
        terms,
        merchantId: offer.merchantId,
        contributed: c.contributed,
        issuerShare: offer.fundingIssuerShareBps > 0,
      });
  }
  return due;
}

/** The accounts a completion's clawback may touch: to lock with the refund's others, in one order. */
export function progressAccounts(purchase: IngestedEvent, due: readonly ProgressDue[]): AccountRef[] {
  if (due.length === 0) return [];
  const { issuerId, chgId } = purchase;
  const merchants = [...new Set(due.map((d) => d.merchantId))];
  const branded = [...new Set(due.filter((d) => d.terms.reward.balanceType === 'branded').map((d) => d.merchantId))];
  return [
    ...branded.map((m) => accounts.chgBranded(issuerId, chgId, m)),
    accounts.chgCashback(issuerId, chgId),
    accounts.chgCashbackOwed(issuerId, chgId),
    ...merchants.map((m) => accounts.merchantReceivable(issuerId, m)),
    ...(due.some((d) => d.issuerShare) ? [accounts.issuerFunding(issuerId)] : []),
  ];
}

interface RefundRef {
  refund: IngestedEvent;
  purchase: IngestedEvent;
  at: Date;
  netAmountMinor: number;
}

/** Lowers each measure and claws back the completions it no longer reaches. Accounts locked by the caller. */
export async function undoProgress(
  tx: Tx,
  ref: RefundRef,
  due: readonly ProgressDue[],
  rewardEventIds: string[],
): Promise<ProgressUndone[]> {
  const undone: ProgressUndone[] = [];
  for (const d of due) {
    const stored = await storedProgress(tx, d.terms.offerId, ref.purchase.chgId);
    const step = progressOnRefund(d.terms, { contributed: d.contributed, netAmountMinor: ref.netAmountMinor, stored });
    const clawed: CompletionClawed[] = [];
    for (const c of step.completions)
      clawed.push(await clawBackCompletion(tx, ref, d.terms.offerId, c.completion, rewardEventIds));
    await writeRefundProgress(tx, {
      offerId: d.terms.offerId,
      chgId: ref.purchase.chgId,
      transactionId: ref.purchase.id,
      contributedAfter: step.contributedAfter,
      after: step.after,
      at: ref.at,
    });
    undone.push({
      offerId: d.terms.offerId,
      contributionBefore: d.contributed,
      contributionAfter: step.contributedAfter,
      before: step.before,
      after: step.after,
      clawed,
    });
  }
  return undone;
}

interface StandingCompletion {
  offerId: string;
  completion: number;
  type: 'cashback_earned' | 'branded_earned';
  /** Earned less what refunds took back of it before: all of it, or 0 (a completion that paid 0). */
  standingMinor: number;
  transactionId: string;
  merchantId: string;
  rewardGrantId: string | null;
  /** Every event of the completion, earned and clawed back, whoever earned it. */
  eventIds: string[];
}

/** The completion's latest earn, and how much of what it earned still stands. */
async function standingCompletion(
  tx: Tx,
  p: { offerId: string; chgId: string; completion: number },
): Promise<StandingCompletion | null> {
  const events = await tx.rewardEvent.findMany({
    where: { offerId: p.offerId, chgId: p.chgId, completion: p.completion },
    orderBy: [{ occurredAt: 'asc' }, { id: 'asc' }],
  });
  const earns = events.filter((e) => e.type === 'cashback_earned' || e.type === 'branded_earned');
  const latest = earns.at(-1);
  if (!latest) return null;
  const earned = earns.reduce((s, e) => s + fromDbMinor(e.amountMinor), 0);
  const clawed = events
    .filter((e) => e.type === 'cashback_clawed_back' || e.type === 'branded_clawed_back')
    .reduce((s, e) => s + fromDbMinor(e.amountMinor), 0);
  return {
    offerId: p.offerId,
    completion: p.completion,
    type: latest.type as StandingCompletion['type'],
    standingMinor: Math.max(0, earned - clawed),
    transactionId: latest.transactionId!,
    merchantId: latest.merchantId!,
    rewardGrantId: latest.rewardGrantId,
    eventIds: events.map((e) => e.id),
  };
}

async function clawBackCompletion(
  tx: Tx,
  ref: RefundRef,
  offerId: string,
  completion: number,
  rewardEventIds: string[],
): Promise<CompletionClawed> {
  const none = {
    offerId,
    completion,
    cashbackMinor: 0,
    brandedMinor: 0,
    owedMinor: 0,
    transactionId: null,
    issuerShareReturnedMinor: 0,
  };
  const standing = await standingCompletion(tx, { offerId, chgId: ref.purchase.chgId, completion });
  if (!standing || standing.standingMinor === 0) return none;
  const { issuerId, chgId } = ref.purchase;
  const posting = {
    base: { issuerId, chgId, transactionId: standing.transactionId, at: ref.at },
    common: { chgId, merchantId: standing.merchantId, transactionId: standing.transactionId },
    key: (what: string) => `refund:${ref.refund.id}:completion:${offerId}:${completion}:${what}`,
  };
  const event = { offerId, completion, sourceEventId: ref.refund.id };
  const firstEvent = rewardEventIds.length;
  const brandedMinor =
    standing.type === 'branded_earned' ? await clawBackGrant(tx, ref, posting, standing, rewardEventIds) : 0;
  const fromCashback = standing.standingMinor - brandedMinor;
  const shortfall = standing.type === 'branded_earned';
  const cashbackAccount = accounts.chgCashback(issuerId, chgId).id;
  const split = await takeFromCashback(tx, cashbackAccount, fromCashback, (amountMinor, owed) =>
    postNow(
      tx,
      rewardEventIds,
      posting.base,
      {
        common: posting.common,
        amountMinor,
        event: {
          ...event,
          idempotencyKey: posting.key(owed ? 'cashback_clawed_back_owed' : 'cashback_clawed_back'),
          type: 'cashback_clawed_back',
          description: shortfall
            ? 'Spent or expired balance reversed: a refund took the offer back below its goal'
            : 'Cashback reversed: a refund took the offer back below its goal',
        },
        transfer: {
          idempotencyKey: posting.key(owed ? 'clawback_cashback_owed' : 'clawback_cashback'),
          kind: owed ? 'clawback_cashback_owed' : 'clawback_cashback',
        },
      },
      shortfall ? { coversBrandedShortfall: true } : {},
    ),
  );
  if (!shortfall) await releaseCompletionHold(tx, standing.transactionId, fromCashback, ref.at);
  const issuerShareReturnedMinor = await returnIssuerShare(tx, posting, standing.eventIds, rewardEventIds[firstEvent]);
  return {
    offerId,
    completion,
    cashbackMinor: fromCashback,
    brandedMinor,
    owedMinor: split.owedMinor,
    transactionId: standing.transactionId,
    issuerShareReturnedMinor,
  };
}

type CompletionPosting = {
  base: { issuerId: string; chgId: string; transactionId: string; at: Date };
  common: RewardPosting['common'];
  key: (what: string) => string;
};

/** A branded completion's value back from its grant, as far as the grant still holds it. */
async function clawBackGrant(
  tx: Tx,
  ref: RefundRef,
  posting: CompletionPosting,
  standing: StandingCompletion,
  rewardEventIds: string[],
): Promise<number> {
  const event = { offerId: standing.offerId, completion: standing.completion, sourceEventId: ref.refund.id };
  const rewardEventId = newId('brevt');
  const draw = await clawBackBranded(tx, {
    ...posting.base,
    merchantId: standing.merchantId,
    idempotencyKey: posting.key('clawback_branded'),
    rewardEventId,
    maxAmountMinor: standing.standingMinor,
    grantIds: standing.rewardGrantId ? [standing.rewardGrantId] : [],
  });
  const brandedMinor = draw.drawnMinor;
  if (brandedMinor > 0) {
    await recordRewardEvent(tx, {
      ...posting.base,
      ...event,
      id: rewardEventId,
      merchantId: standing.merchantId,
      idempotencyKey: posting.key('branded_clawed_back'),
      type: 'branded_clawed_back',
      amountMinor: brandedMinor,
      rewardGrantId: standing.rewardGrantId,
      description: 'Balance reversed: a refund took the offer back below its goal',
      occurredAt: ref.at,
    });
    rewardEventIds.push(rewardEventId);
  }
  return brandedMinor;
}

/**
 * What stands of the issuer's share of the completion's reward (charged with its earns, less what
 * clawbacks before returned), returned whole with its clawback's first event: the completion
 * comes back whole.
 */
async function returnIssuerShare(
  tx: Tx,
  posting: { base: { issuerId: string; at: Date }; common: RewardPosting['common']; key: (what: string) => string },
  eventIds: string[],
  rewardEventId: string | undefined,
): Promise<number> {
  if (!rewardEventId) return 0;
  const rows = await tx.ledgerTransfer.groupBy({
    by: ['kind'],
    where: {
      rewardEventId: { in: eventIds },
      kind: { in: ['issuer_share_cashback', 'issuer_share_branded', 'issuer_share_returned'] },
    },
    _sum: { amountMinor: true },
  });
  const sum = (...kinds: string[]) =>
    rows.filter((r) => kinds.includes(r.kind)).reduce((s, r) => s + fromDbMinor(r._sum.amountMinor ?? 0n), 0);
  const dueMinor = sum('issuer_share_cashback', 'issuer_share_branded') - sum('issuer_share_returned');
  if (dueMinor <= 0) return 0;
  await postAccompanying(tx, posting.base, {
    common: posting.common,
    amountMinor: dueMinor,
    rewardEventId,
    transfer: { idempotencyKey: posting.key('issuer_share_returned'), kind: 'issuer_share_returned' },
  });
  return dueMinor;
}

/** The completing purchase's hold shrinks by the completion's cashback taken back. */
async function releaseCompletionHold(tx: Tx, transactionId: string, amountMinor: number, at: Date): Promise<void> {
  await tx.$executeRaw`
    UPDATE cashback_hold SET remaining_minor = remaining_minor - LEAST(remaining_minor, ${amountMinor}), updated_at = ${at}
     WHERE transaction_id = ${transactionId}`;
}
