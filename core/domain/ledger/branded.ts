// Branded-balance operations: each keeps the grants and the chg_branded account in step (the
// sum of remaining grant value equals the account balance) by drawing and posting in one
// transaction. These, not drawFromGrants alone, are what workflow activities should call.
import type { Allocation } from '../../ledger';
import { LedgerError, LEDGER_GRANT_NOT_EXPIRABLE, fromDbMinor, sumMinor } from '../../ledger';
import { createGrant, drawFromGrants, toGrant, type DrawMode, type Grant } from './grants';
import { postTransfer, type Transfer } from './transfers';
import { lockIdempotencyKey, type Tx } from './tx';

interface Common {
  idempotencyKey: string;
  issuerId: string;
  chgId: string;
  merchantId: string;
  at: Date;
  rewardEventId?: string | null;
  transactionId?: string | null;
}

export interface EarnBrandedInput extends Common {
  amountMinor: number;
  availableAt: Date;
  expiresAt: Date;
}

/** Credits the group's branded account and opens the grant that holds the value. */
export async function earnBranded(
  tx: Tx,
  input: EarnBrandedInput,
): Promise<{ transfer: Transfer; grant: Grant; created: boolean }> {
  const posted = await postTransfer(tx, { ...input, kind: 'earn_branded' });
  const { grant } = await createGrant(tx, {
    issuerId: input.issuerId,
    chgId: input.chgId,
    merchantId: input.merchantId,
    earnTransferId: posted.transfer.id,
    sourceTransactionId: input.transactionId ?? null,
    amountMinor: input.amountMinor,
    availableAt: input.availableAt,
    expiresAt: input.expiresAt,
    at: input.at,
  });
  return { transfer: posted.transfer, grant, created: posted.created };
}

export interface DrawResult {
  /** null when nothing was drawn (no eligible value): no transfer is posted for zero. */
  transfer: Transfer | null;
  allocations: Allocation[];
  drawnMinor: number;
  created: boolean;
}

/** Spends up to `maxAmountMinor` of available, unexpired balance, FIFO by expiry. */
export function spendBranded(tx: Tx, input: Common & { maxAmountMinor: number }): Promise<DrawResult> {
  return drawAndPost(tx, input, 'spend', input.maxAmountMinor, undefined);
}

/** Claws back up to `maxAmountMinor` from the grants a refunded purchase created, and from no
 *  others; value already spent or expired is not clawed back (it can no longer be owed). */
export function clawBackBranded(
  tx: Tx,
  input: Common & { maxAmountMinor: number; grantIds: readonly string[] },
): Promise<DrawResult> {
  return drawAndPost(tx, input, 'clawback', input.maxAmountMinor, input.grantIds);
}

/** Takes back up to `maxAmountMinor` of a claim's branded credit from the grants it opened, and from
 *  no others, to the issuer that funded it (a refund of the purchase the claim was about). */
export function reverseBrandedCredit(
  tx: Tx,
  input: Common & { maxAmountMinor: number; grantIds: readonly string[] },
): Promise<DrawResult> {
  return drawAndPost(tx, input, 'reverse_credit', input.maxAmountMinor, input.grantIds);
}

/** Takes up to `maxAmountMinor` of unexpired balance (spendable yet or not) for a customer-service
 *  debit, soonest-expiring first; the caller refuses a draw short of what it asked. */
export function debitBranded(tx: Tx, input: Common & { maxAmountMinor: number }): Promise<DrawResult> {
  return drawAndPost(tx, input, 'adjust', input.maxAmountMinor, undefined);
}

/** Moves an expired grant's remaining value to the merchant's breakage account. */
export async function expireGrant(
  tx: Tx,
  input: { issuerId: string; grantId: string; at: Date; idempotencyKey?: string; rewardEventId?: string | null },
): Promise<DrawResult> {
  const row = await tx.rewardGrant.findFirst({ where: { id: input.grantId, issuerId: input.issuerId } });
  if (!row) throw new LedgerError(LEDGER_GRANT_NOT_EXPIRABLE, `grant ${input.grantId} not found`);
  const grant = toGrant(row);
  if (grant.expiresAt > input.at)
    throw new LedgerError(LEDGER_GRANT_NOT_EXPIRABLE, `grant ${grant.id} expires at ${grant.expiresAt.toISOString()}`);
  const common: Common = {
    idempotencyKey: input.idempotencyKey ?? `expire:${grant.id}`,
    issuerId: grant.issuerId,
    chgId: grant.chgId,
    merchantId: grant.merchantId,
    at: input.at,
    rewardEventId: input.rewardEventId,
    transactionId: grant.sourceTransactionId,
  };
  // The whole grant at most; drawFromGrants reads the remaining value under the row lock.
  return drawAndPost(tx, common, 'expire', grant.amountMinor, [grant.id]);
}

const KIND_OF_MODE = {
  spend: 'spend_branded',
  clawback: 'clawback_branded',
  expire: 'expire_branded',
  adjust: 'adjust_debit_branded',
  reverse_credit: 'adjust_debit_branded',
} as const;

/**
 * The amount of a draw is only known after drawing, so the key cannot be claimed by the
 * transfer insert up front; an advisory lock on the key serialises same-key callers instead,
 * and a replay returns the stored transfer and its draws without drawing again.
 */
async function drawAndPost(
  tx: Tx,
  input: Common,
  mode: DrawMode,
  maxAmountMinor: number,
  grantIds: readonly string[] | undefined,
): Promise<DrawResult> {
  await lockIdempotencyKey(tx, input.idempotencyKey);
  const previous = await tx.ledgerTransfer.findUnique({ where: { idempotencyKey: input.idempotencyKey } });
  if (previous) {
    // postTransfer applies the same/different-content rule to the stored amount.
    const replay = await postTransfer(tx, {
      ...input,
      kind: KIND_OF_MODE[mode],
      amountMinor: fromDbMinor(previous.amountMinor),
    });
    const draws = await tx.rewardGrantDraw.findMany({ where: { transferId: previous.id }, orderBy: { id: 'asc' } });
    const allocations = draws.map((d) => ({ grantId: d.grantId, amountMinor: fromDbMinor(d.amountMinor) }));
    return { transfer: replay.transfer, allocations, drawnMinor: replay.transfer.amountMinor, created: false };
  }
  const allocations = await drawFromGrants(tx, {
    ...input,
    amountMinor: maxAmountMinor,
    mode,
    preferGrantIds: grantIds,
  });
  const drawnMinor = sumMinor(allocations.map((a) => a.amountMinor));
  if (drawnMinor === 0) return { transfer: null, allocations: [], drawnMinor: 0, created: false };
  const posted = await postTransfer(tx, { ...input, kind: KIND_OF_MODE[mode], amountMinor: drawnMinor });
  await tx.rewardGrantDraw.createMany({
    data: allocations.map((a) => ({
      issuerId: input.issuerId,
      grantId: a.grantId,
      transferId: posted.transfer.id,
      amountMinor: BigInt(a.amountMinor),
      createdAt: input.at,
    })),
  });
  return { transfer: posted.transfer, allocations, drawnMinor, created: posted.created };
}
