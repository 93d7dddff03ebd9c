// Posting a customer-service adjustment (API.md, Adjustments; DESIGN.md, Ledger): in ONE
// database transaction, its transfer (the issuer's adjustment account on the other side, never
// the merchant's receivable), the grant a branded credit opens or the draws a branded debit
// takes, its reward event (signed), its row, its audit entry and its reward_adjusted webhook.
// A cashback credit repays first what the group owes, as earned cashback does. A claim's credit
// is the purchase's own reward: on hold until the purchase's return window ends, and taken back
// by its later refunds (activities/lifecycle/claim-credits.ts).
// The API's route and a claim's approval both post through here.
import { createHash } from 'node:crypto';
import { errors } from '../errors';
import { newId } from '../ids';
import { accounts, fromDbMinor } from '../ledger';
import {
  adjustmentDescription,
  adjustmentEventType,
  adjustmentTransferKind,
  reasonCodeViolation,
  type AdjustmentReasonCode,
  type BalanceType,
} from '../rules/adjustments';
import { factKey } from '../webhooks/fact-webhooks';
import type { Adjustment as AdjustmentRow } from '../../prisma/generated/client';
import { recordAudit } from './audit';
import { createGrant, debitBranded, postTransfer, recordRewardEvent, type Tx } from './ledger';
import { ensureAccounts, lockAccounts } from './ledger/accounts';
import { repaymentOf } from '../rules/cashback';
import { lockIdempotencyKey } from './ledger/tx';
import { recordFactWebhooks } from './webhook-records';

const DAY_MS = 86_400_000;

export interface AdjustmentRequest {
  balanceType: BalanceType;
  /** Signed: a credit is positive, a debit negative. */
  amountMinor: number;
  merchantId?: string;
  reasonCode: AdjustmentReasonCode;
  note?: string;
  transactionId?: string;
}

export interface PostAdjustmentInput extends AdjustmentRequest {
  issuerId: string;
  chgId: string;
  /** The API token's id, or operator:<actor> for a claim's approval. */
  actor: string;
  /** Unique per issuer: the request's Idempotency-Key, or claim:<id>:<balance type>. */
  idempotencyKey: string;
  claimId?: string;
  /** A claim's credit: what refunds had taken of the purchase when it is posted (its later
   *  refunds take the credit back in proportion to the rest). */
  purchaseRefundedMinor?: number;
  /** A claim's cashback credit: on hold until then (the purchase's return window), when later. */
  holdUntil?: Date;
  /** The issuer's clock (a sandbox issuer's may run ahead): dates the posting, its grant and event. */
  at: Date;
  /** Real time, for the operator audit log, which orders every issuer's entries by it. */
  recordedAt: Date;
}

export interface Adjustment {
  id: string;
  chgId: string;
  balanceType: BalanceType;
  amountMinor: number;
  merchantId: string | null;
  reasonCode: AdjustmentReasonCode;
  note: string | null;
  transactionId: string | null;
  claimId: string | null;
  rewardEventId: string;
  rewardGrantId: string | null;
  transferId: string;
  createdAt: Date;
}

export function toAdjustment(row: AdjustmentRow): Adjustment {
  return {
    id: row.id,
    chgId: row.chgId,
    balanceType: row.balanceType as BalanceType,
    amountMinor: fromDbMinor(row.amountMinor),
    merchantId: row.merchantId,
    reasonCode: row.reasonCode as AdjustmentReasonCode,
    note: row.note,
    transactionId: row.transactionId,
    claimId: row.claimId,
    rewardEventId: row.rewardEventId,
    rewardGrantId: row.rewardGrantId,
    transferId: row.transferId,
    createdAt: row.createdAt,
  };
}

/** What the request asked for: the same key with another request is a conflict, not a replay. */
function requestHash(input: PostAdjustmentInput): string {
  const { balanceType, amountMinor, merchantId, reasonCode, note, transactionId } = input;
  const canonical = JSON.stringify([
    input.chgId,
    balanceType,
    amountMinor,
    merchantId,
    reasonCode,
    note,
    transactionId,
  ]);
  return createHash('sha256').update(canonical).digest('hex');
}

/**
 * Posts the adjustment, or returns the one posted before under the same key (created false).
 * Throws ApiErrors: 404 for a group, merchant or transaction that is not the issuer's, 409
 * insufficient_balance for a debit beyond what the group holds (nothing is written), 409
 * idempotency_key_reused for the key of another request. The caller checks the issuer's limit.
 */
export async function postAdjustment(
  tx: Tx,
  input: PostAdjustmentInput,
): Promise<{ adjustment: Adjustment; created: boolean }> {
  await lockIdempotencyKey(tx, `adjustment:${input.issuerId}:${input.idempotencyKey}`);
  const hash = requestHash(input);
  const previous = await tx.adjustment.findUnique({
    where: { issuerId_idempotencyKey: { issuerId: input.issuerId, idempotencyKey: input.idempotencyKey } },
  });
  if (previous) {
    if (previous.requestHash !== hash)
      throw errors.idempotencyKeyReused({ adjustmentId: previous.id, chgId: previous.chgId });
    return { adjustment: toAdjustment(previous), created: false };
  }
  const misfit = reasonCodeViolation(input.balanceType, input.amountMinor, input.reasonCode);
  if (misfit) throw errors.validation('invalid_body', `${misfit}.`, [{ path: '/reasonCode', message: misfit }]);
  const merchant = await requireParties(tx, input);
  const id = newId('adj');
  const rewardEventId = newId('brevt');
  const { transferId, rewardGrantId } = await moveMoney(tx, input, { id, rewardEventId, merchant });
  await recordRewardEvent(tx, {
    id: rewardEventId,
    idempotencyKey: `adjustment:${id}`,
    issuerId: input.issuerId,
    chgId: input.chgId,
    type: adjustmentEventType(input.balanceType),
    amountMinor: input.amountMinor,
    merchantId: input.merchantId ?? null,
    transactionId: input.transactionId ?? null,
    rewardGrantId,
    description: adjustmentDescription(input.balanceType, input.amountMinor, input.reasonCode),
    occurredAt: input.at,
  });
  const row = await tx.adjustment.create({
    data: {
      id,
      issuerId: input.issuerId,
      chgId: input.chgId,
      balanceType: input.balanceType,
      amountMinor: BigInt(input.amountMinor),
      merchantId: input.merchantId ?? null,
      reasonCode: input.reasonCode,
      note: input.note ?? null,
      transactionId: input.transactionId ?? null,
      claimId: input.claimId ?? null,
      actor: input.actor,
      idempotencyKey: input.idempotencyKey,
      requestHash: hash,
      transferId,
      rewardEventId,
      rewardGrantId,
      purchaseRefundedMinor: input.purchaseRefundedMinor === undefined ? null : BigInt(input.purchaseRefundedMinor),
      createdAt: input.at,
    },
  });
  if (input.holdUntil && input.holdUntil > input.at && input.transactionId && input.balanceType === 'cashback')
    await holdCashback(tx, { ...input, transactionId: input.transactionId, payableAt: input.holdUntil });
  const adjustment = toAdjustment(row);
  await recordAudit(
    tx,
    {
      actor: input.actor,
      action: 'adjustment.post',
      targetId: id,
      details: { issuerId: input.issuerId, chgId: input.chgId, ...adjustmentData(adjustment) },
    },
    input.recordedAt,
  );
  await recordFactWebhooks(tx, [
    {
      issuerId: input.issuerId,
      type: 'reward_adjusted',
      factKey: factKey.rewardAdjusted(id),
      sourceId: id,
      data: { chgId: input.chgId, adjustmentId: id, ...adjustmentData(adjustment), currency: 'usd', rewardEventId },
      at: input.at,
    },
  ]);
  return { adjustment, created: true };
}

/** The transfer (and the grant of a branded credit, the draws of a branded debit). */
async function moveMoney(
  tx: Tx,
  input: PostAdjustmentInput,
  refs: { id: string; rewardEventId: string; merchant: { brandedExpiryDays: number } | null },
): Promise<{ transferId: string; rewardGrantId: string | null }> {
  const cashback = input.balanceType === 'cashback';
  const writeOff = input.reasonCode === 'write_off';
  const group = writeOff
    ? accounts.chgCashbackOwed(input.issuerId, input.chgId)
    : cashback
      ? accounts.chgCashback(input.issuerId, input.chgId)
      : accounts.chgBranded(input.issuerId, input.chgId, input.merchantId!);
  // Every account in id order before anything reads a balance (core/domain/ledger/accounts.ts):
  // what the group owes too, when it has such an account, which a cashback credit repays.
  const both = [group, accounts.issuerAdjustments(input.issuerId)];
  await ensureAccounts(tx, both, input.at);
  const owed = accounts.chgCashbackOwed(input.issuerId, input.chgId);
  const locked = await lockAccounts(tx, [...both.map((a) => a.id), ...(cashback ? [owed.id] : [])]);
  const common = {
    idempotencyKey: `adjustment:${refs.id}`,
    issuerId: input.issuerId,
    chgId: input.chgId,
    merchantId: input.merchantId ?? '',
    rewardEventId: refs.rewardEventId,
    transactionId: input.transactionId ?? null,
    at: input.at,
  };
  const magnitude = Math.abs(input.amountMinor);
  if (writeOff) {
    // Forgives at most what the group owes: the owed account never goes below zero.
    const owed = locked.get(group.id)!.balanceMinor;
    if (owed < magnitude) throw insufficient(input, owed);
    const kind = adjustmentTransferKind(input.balanceType, input.amountMinor, input.reasonCode);
    const { transfer } = await postTransfer(tx, { ...common, kind, amountMinor: magnitude });
    return { transferId: transfer.id, rewardGrantId: null };
  }
  if (input.amountMinor > 0) {
    const kind = adjustmentTransferKind(input.balanceType, input.amountMinor);
    const { transfer } = await postTransfer(tx, { ...common, kind, amountMinor: magnitude });
    if (cashback) {
      await repayOwed(tx, input, { ...common, idempotencyKey: `adjustment:${refs.id}:repay` });
      return { transferId: transfer.id, rewardGrantId: null };
    }
    // A branded credit is a grant available at once, expiring by the merchant's rule.
    const { grant } = await createGrant(tx, {
      issuerId: input.issuerId,
      chgId: input.chgId,
      merchantId: input.merchantId!,
      earnTransferId: transfer.id,
      sourceTransactionId: input.transactionId ?? null,
      amountMinor: magnitude,
      availableAt: input.at,
      expiresAt: new Date(input.at.getTime() + refs.merchant!.brandedExpiryDays * DAY_MS),
      at: input.at,
    });
    return { transferId: transfer.id, rewardGrantId: grant.id };
  }
  if (cashback) {
    const available = locked.get(group.id)!.balanceMinor;
    if (available < magnitude) throw insufficient(input, available);
    const { transfer } = await postTransfer(tx, { ...common, kind: 'adjust_debit_cashback', amountMinor: magnitude });
    return { transferId: transfer.id, rewardGrantId: null };
  }
  const drawn = await debitBranded(tx, { ...common, maxAmountMinor: magnitude });
  // A short draw rolls back with the caller's transaction: all or nothing.
  if (drawn.drawnMinor < magnitude || !drawn.transfer) throw insufficient(input, drawn.drawnMinor);
  return { transferId: drawn.transfer.id, rewardGrantId: null };
}

/**
 * A cashback credit repays first what the group owes (a refund after payout left it owing), as
 * earned cashback does: as much of it as the credit covers. Its own event, as the settlement's.
 */
async function repayOwed(
  tx: Tx,
  input: PostAdjustmentInput,
  common: {
    idempotencyKey: string;
    issuerId: string;
    chgId: string;
    merchantId: string;
    transactionId: string | null;
    at: Date;
  },
): Promise<void> {
  const owedId = accounts.chgCashbackOwed(input.issuerId, input.chgId).id;
  const owedMinor = (await lockAccounts(tx, [owedId])).get(owedId)?.balanceMinor ?? 0;
  const repaidMinor = repaymentOf(input.amountMinor, owedMinor);
  if (repaidMinor === 0) return;
  const rewardEventId = newId('brevt');
  await recordRewardEvent(tx, {
    id: rewardEventId,
    idempotencyKey: common.idempotencyKey,
    issuerId: input.issuerId,
    chgId: input.chgId,
    type: 'cashback_owed_repaid',
    amountMinor: -repaidMinor,
    transactionId: common.transactionId,
    description: 'Cashback applied to what a refund left owing',
    occurredAt: input.at,
  });
  await postTransfer(tx, { ...common, kind: 'repay_cashback_owed', amountMinor: repaidMinor, rewardEventId });
}

/** A claim's cashback credit joins its purchase's hold (one per purchase), or opens it. */
async function holdCashback(
  tx: Tx,
  h: { transactionId: string; issuerId: string; chgId: string; amountMinor: number; payableAt: Date; at: Date },
): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO cashback_hold (transaction_id, issuer_id, chg_id, amount_minor, remaining_minor, payable_at, created_at, updated_at)
    VALUES (${h.transactionId}, ${h.issuerId}, ${h.chgId}, ${h.amountMinor}, ${h.amountMinor}, ${h.payableAt}, ${h.at}, ${h.at})
    ON CONFLICT (transaction_id) DO UPDATE
       SET amount_minor = cashback_hold.amount_minor + EXCLUDED.amount_minor,
           remaining_minor = cashback_hold.remaining_minor + EXCLUDED.remaining_minor,
           updated_at = EXCLUDED.updated_at`;
}

function adjustmentData(a: Adjustment) {
  return {
    balanceType: a.balanceType,
    amountMinor: a.amountMinor,
    merchantId: a.merchantId,
    reasonCode: a.reasonCode,
    transactionId: a.transactionId,
  };
}

function insufficient(input: PostAdjustmentInput, availableMinor: number) {
  if (input.reasonCode === 'write_off')
    return errors.conflict(
      'insufficient_balance',
      `The group owes ${availableMinor} minor units of cashback; a write-off of ${input.amountMinor} would forgive more than it owes.`,
      { balanceType: input.balanceType, merchantId: null, availableMinor },
    );
  const what = input.balanceType === 'cashback' ? 'cashback' : `branded balance at ${input.merchantId}`;
  return errors.conflict(
    'insufficient_balance',
    `The group holds ${availableMinor} minor units of ${what}; a debit of ${Math.abs(input.amountMinor)} would take it below zero.`,
    { balanceType: input.balanceType, merchantId: input.merchantId ?? null, availableMinor },
  );
}

/** The group, the merchant of a branded adjustment and the transaction it names: the issuer's, or 404. */
async function requireParties(tx: Tx, input: PostAdjustmentInput): Promise<{ brandedExpiryDays: number } | null> {
  const group = await tx.cardholderGroup.findFirst({
    where: { id: input.chgId, issuerId: input.issuerId },
    select: { id: true },
  });
  if (!group) throw errors.notFound('chg_not_found', `No cardholder group ${input.chgId}.`);
  if (input.transactionId) {
    const txn = await tx.ingestedEvent.findFirst({
      where: { id: input.transactionId, issuerId: input.issuerId, chgId: input.chgId, kind: 'settled' },
      select: { id: true },
    });
    if (!txn) throw errors.notFound('transaction_not_found', `No transaction ${input.transactionId} in this group.`);
  }
  if (input.balanceType === 'cashback') return null;
  const [merchant] = await tx.$queryRaw<{ branded_expiry_days: number; branded_enabled: boolean }[]>`
    SELECT branded_expiry_days, branded_enabled FROM merchant
     WHERE id = ${input.merchantId} AND (issuer_ids IS NULL OR ${input.issuerId} = ANY (issuer_ids))`;
  if (!merchant) throw errors.notFound('merchant_not_found', `No merchant ${input.merchantId}.`);
  // Balance at a merchant without branded balance could never be spent there.
  if (input.amountMinor > 0 && !merchant.branded_enabled)
    throw errors.conflict('branded_not_enabled', `Merchant ${input.merchantId} has no branded balance programme.`);
  return { brandedExpiryDays: merchant.branded_expiry_days };
}
