// A refund takes back what approved claims credited to its purchase (API.md, Claims): a claim's
// credit is the purchase's own reward, so each refund takes the credit's share of the part of the
// purchase refunded since the credit was posted (core/rules/settlement.ts, claimCreditsDue), and
// the refund that completes the purchase takes the rest. The issuer funded the credit, so it goes
// back to the issuer (adjust_debit_*), never to the merchant. As with the purchase's earned
// reward: cashback comes from the group's cashback balance and what that no longer holds (it was
// paid out) is owed; branded value comes from the grants the credit opened, and what they no
// longer hold (spent, expired) from cashback, then owed. The cardholder sees each as a negative
// adjustment of the refund (its source event).
import { newId } from '../../core/ids';
import { postTransfer, recordRewardEvent, reverseBrandedCredit } from '../../core/domain/ledger';
import { accounts, fromDbMinor, type TransferKind } from '../../core/ledger';
import type { ClawbackSplit } from '../../core/rules/cashback';
import { takeFromCashback } from './cashback-clawback';
import { claimCreditsDue, type ClaimCredit } from '../../core/rules/settlement';
import type { IngestedEvent, Prisma } from '../../prisma/generated/client';

type Tx = Prisma.TransactionClient;

export interface ClaimCredits {
  /** The merchant the claims were about (a purchase the descriptor matched to none has only this). */
  merchantId: string | null;
  cashback: ClaimCredit[];
  /** At the merchant the claim named, in the grant each opened. */
  branded: Array<ClaimCredit & { grantId: string | null; merchantId: string }>;
}

/** The credits approved claims posted for the purchase, by balance type. */
export async function claimCreditsOf(tx: Tx, purchase: IngestedEvent): Promise<ClaimCredits> {
  const rows = await tx.adjustment.findMany({
    where: {
      issuerId: purchase.issuerId,
      chgId: purchase.chgId,
      transactionId: purchase.id,
      claimId: { not: null },
      purchaseRefundedMinor: { not: null },
      amountMinor: { gt: 0 },
    },
    select: {
      balanceType: true,
      amountMinor: true,
      purchaseRefundedMinor: true,
      rewardGrantId: true,
      merchantId: true,
      claimId: true,
    },
    orderBy: { id: 'asc' },
  });
  const claim =
    rows.length > 0
      ? await tx.claim.findFirst({ where: { id: rows[0].claimId! }, select: { merchantId: true } })
      : null;
  const credit = (r: (typeof rows)[number]) => ({
    amountMinor: fromDbMinor(r.amountMinor),
    purchaseRefundedMinor: fromDbMinor(r.purchaseRefundedMinor!),
  });
  return {
    merchantId: claim?.merchantId ?? null,
    cashback: rows.filter((r) => r.balanceType === 'cashback').map(credit),
    branded: rows
      .filter((r) => r.balanceType === 'branded' && r.merchantId !== null)
      .map((r) => ({ ...credit(r), grantId: r.rewardGrantId, merchantId: r.merchantId! })),
  };
}

export interface ClaimCreditsDue {
  cashbackMinor: number;
  /** Per merchant whose balance the credits were. */
  brandedMinorByMerchant: Map<string, number>;
}

/** What this refund takes back of the claims' credits, per balance type. */
export function claimCreditsDueOf(
  credits: ClaimCredits,
  refunds: { purchaseAmountMinor: number; refundedBeforeMinor: number; refundMinor: number },
): ClaimCreditsDue {
  const brandedMinorByMerchant = new Map<string, number>();
  for (const merchantId of new Set(credits.branded.map((c) => c.merchantId))) {
    const due = claimCreditsDue(
      credits.branded.filter((c) => c.merchantId === merchantId),
      refunds,
    );
    if (due > 0) brandedMinorByMerchant.set(merchantId, due);
  }
  return { cashbackMinor: claimCreditsDue(credits.cashback, refunds), brandedMinorByMerchant };
}

/** Every account taking the credits back may touch, for the caller to lock in id order first. */
export function claimCreditAccounts(purchase: IngestedEvent, due: ClaimCreditsDue) {
  const { issuerId, chgId } = purchase;
  const branded = [...due.brandedMinorByMerchant.keys()].map((m) => accounts.chgBranded(issuerId, chgId, m));
  if (due.cashbackMinor === 0 && branded.length === 0) return [];
  return [
    ...branded,
    accounts.chgCashback(issuerId, chgId),
    accounts.chgCashbackOwed(issuerId, chgId),
    accounts.issuerAdjustments(issuerId),
  ];
}

export interface ClaimCreditsTaken {
  cashback: ClawbackSplit;
  brandedDrawnMinor: number;
  /** Branded value the credit's grants no longer held, taken from cashback (or owed). */
  brandedShortfall: ClawbackSplit;
}

export const NOTHING_TAKEN: ClaimCreditsTaken = {
  cashback: { fromBalanceMinor: 0, owedMinor: 0 },
  brandedDrawnMinor: 0,
  brandedShortfall: { fromBalanceMinor: 0, owedMinor: 0 },
};

interface RefundPosting {
  refund: IngestedEvent;
  purchase: IngestedEvent;
  at: Date;
  /** The purchase's merchant, if it matched one: the transfers name it. */
  merchantId: string;
  key: (what: string) => string;
}

/**
 * Posts what the refund takes back of the claims' credits. The caller has locked the group's
 * cashback, owed and branded accounts and the issuer's adjustment account.
 */
export async function takeBackClaimCredits(
  tx: Tx,
  p: RefundPosting,
  credits: ClaimCredits,
  due: ClaimCreditsDue,
  rewardEventIds: string[],
): Promise<ClaimCreditsTaken> {
  const cashback = await fromCashback(tx, p, due.cashbackMinor, rewardEventIds, false);
  let brandedDrawnMinor = 0;
  let shortfallMinor = 0;
  for (const [merchantId, dueMinor] of due.brandedMinorByMerchant) {
    const grantIds = credits.branded
      .filter((c) => c.merchantId === merchantId && c.grantId !== null)
      .map((c) => c.grantId!);
    const drawn = await fromGrants(tx, { ...p, merchantId }, dueMinor, grantIds, rewardEventIds);
    brandedDrawnMinor += drawn;
    shortfallMinor += dueMinor - drawn;
  }
  const brandedShortfall = await fromCashback(tx, p, shortfallMinor, rewardEventIds, true);
  return { cashback, brandedDrawnMinor, brandedShortfall };
}

/** Cashback back to the issuer from the group's balance as far as it reaches; the rest owed. */
async function fromCashback(
  tx: Tx,
  p: RefundPosting,
  dueMinor: number,
  rewardEventIds: string[],
  shortfall: boolean,
): Promise<ClawbackSplit> {
  const accountId = accounts.chgCashback(p.purchase.issuerId, p.purchase.chgId).id;
  const what = shortfall ? 'claim_branded_shortfall' : 'claim_cashback';
  return takeFromCashback(tx, accountId, dueMinor, async (amountMinor, owed) => {
    const [suffix, kind]: [string, TransferKind] = owed
      ? ['_owed', 'adjust_debit_cashback_owed']
      : ['', 'adjust_debit_cashback'];
    const rewardEventId = newId('brevt');
    await recordRewardEvent(tx, {
      ...base(p),
      id: rewardEventId,
      idempotencyKey: p.key(`${what}_reversed${suffix}`),
      type: 'cashback_adjusted',
      amountMinor: -amountMinor,
      merchantId: p.merchantId,
      sourceEventId: p.refund.id,
      coversBrandedShortfall: shortfall,
      description: describe(shortfall, owed),
      occurredAt: p.at,
    });
    await postTransfer(tx, {
      ...base(p),
      idempotencyKey: p.key(`${what}_${kind}`),
      kind,
      merchantId: p.merchantId,
      amountMinor,
      rewardEventId,
    });
    rewardEventIds.push(rewardEventId);
  });
}

function describe(shortfall: boolean, owed: boolean): string {
  const what = shortfall
    ? 'Spent claim balance reversed by a refund, taken from cashback'
    : 'Claim credit reversed by a refund';
  return owed ? `${what}, owed: it was already paid out` : what;
}

/** Branded value back to the issuer from the grants the claims' credits opened. */
async function fromGrants(
  tx: Tx,
  p: RefundPosting,
  dueMinor: number,
  grantIds: string[],
  rewardEventIds: string[],
): Promise<number> {
  if (grantIds.length === 0) return 0;
  const rewardEventId = newId('brevt');
  const draw = await reverseBrandedCredit(tx, {
    ...base(p),
    merchantId: p.merchantId,
    idempotencyKey: p.key(`claim_branded_reverse_credit:${p.merchantId}`),
    rewardEventId,
    maxAmountMinor: dueMinor,
    grantIds,
  });
  if (draw.drawnMinor === 0) return 0;
  await recordRewardEvent(tx, {
    ...base(p),
    id: rewardEventId,
    merchantId: p.merchantId,
    sourceEventId: p.refund.id,
    idempotencyKey: p.key(`claim_branded_reversed:${p.merchantId}`),
    type: 'branded_adjusted',
    amountMinor: -draw.drawnMinor,
    rewardGrantId: draw.allocations[0]?.grantId ?? null,
    description: 'Claim balance reversed by a refund',
    occurredAt: p.at,
  });
  rewardEventIds.push(rewardEventId);
  return draw.drawnMinor;
}

const base = (p: RefundPosting) => ({
  issuerId: p.purchase.issuerId,
  chgId: p.purchase.chgId,
  transactionId: p.purchase.id,
  at: p.at,
});
