// Posting a transfer: two immutable entries that sum to zero, and both accounts' cached
// balances, in the caller's database transaction. Idempotent by key (STYLE.md habit 7).
import { ledgerPostings } from '../../metrics';
import type { LedgerTransfer } from '../../../prisma/generated/client';
import type { Db } from '../../../prisma/client';
import {
  LedgerError,
  LEDGER_IDEMPOTENCY_CONFLICT,
  LEDGER_INSUFFICIENT_BALANCE,
  LEDGER_INVALID_INPUT,
  assert,
  balanceDelta,
  entriesOf,
  fromDbMinor,
  isLiability,
  isTransferKind,
  planTransfer,
  requirePositiveMinor,
  type TransferKind,
  type TransferPlan,
} from '../../ledger';
import { ensureAccounts, lockAccounts } from './accounts';
import { newTransferId } from './batch';
import { inTransaction, isCheckViolation, type Tx } from './tx';

export interface PostTransferInput {
  idempotencyKey: string;
  kind: TransferKind;
  issuerId: string;
  chgId: string;
  merchantId: string;
  amountMinor: number;
  rewardEventId?: string | null;
  /** The purchase (`txn_`) the transfer belongs to. */
  transactionId?: string | null;
  at: Date;
}

export interface Transfer {
  id: string;
  issuerId: string;
  idempotencyKey: string;
  kind: TransferKind;
  debitAccountId: string;
  creditAccountId: string;
  amountMinor: number;
  rewardEventId: string | null;
  transactionId: string | null;
  createdAt: Date;
}

export interface PostedTransfer {
  transfer: Transfer;
  /** false when the key had been posted before with the same content: nothing was written. */
  created: boolean;
}

export function toTransfer(row: LedgerTransfer): Transfer {
  assert(isTransferKind(row.kind), `unknown transfer kind ${row.kind}`);
  return { ...row, kind: row.kind, amountMinor: fromDbMinor(row.amountMinor) };
}

/**
 * Posts one transfer inside `tx`. Order matters: lock both accounts (id order), then look
 * for the key, then check the balance, then write. Same-key posts therefore serialise on the
 * account locks, and a replay answers from the stored row even if the balance has moved since.
 * A thrown LedgerError has written nothing of the transfer; the caller should still roll back.
 */
export async function postTransfer(tx: Tx, input: PostTransferInput): Promise<PostedTransfer> {
  const plan = validateAndPlan(input);
  await ensureAccounts(tx, [plan.debit, plan.credit], input.at);
  const locked = await lockAccounts(tx, [plan.debit.id, plan.credit.id]);

  const existing = await tx.ledgerTransfer.findUnique({ where: { idempotencyKey: input.idempotencyKey } });
  if (existing) return { transfer: sameOrConflict(existing, input, plan), created: false };

  const entries = entriesOf(plan, input.amountMinor);
  for (const entry of entries) {
    const account = locked.get(entry.accountId);
    assert(account, `account ${entry.accountId} was not locked`);
    const after = account.balanceMinor + balanceDelta(account.normalSide, entry.amountMinor);
    if (isLiability(account.kind) && after < 0) {
      throw new LedgerError(
        LEDGER_INSUFFICIENT_BALANCE,
        `account ${account.id} holds ${account.balanceMinor}, cannot give ${input.amountMinor}`,
        {
          accountId: account.id,
          balanceMinor: account.balanceMinor,
          amountMinor: input.amountMinor,
        },
      );
    }
  }

  const transfer: Transfer = {
    id: newTransferId(),
    issuerId: input.issuerId,
    idempotencyKey: input.idempotencyKey,
    kind: input.kind,
    debitAccountId: plan.debit.id,
    creditAccountId: plan.credit.id,
    amountMinor: input.amountMinor,
    rewardEventId: input.rewardEventId ?? null,
    transactionId: input.transactionId ?? null,
    createdAt: input.at,
  };
  // ON CONFLICT DO NOTHING: a concurrent poster of the same key with other accounts (hence
  // other locks) makes this insert wait for it, then skip; we then compare with its row.
  const inserted = await tx.ledgerTransfer.createMany({
    data: [{ ...transfer, amountMinor: BigInt(transfer.amountMinor) }],
    skipDuplicates: true,
  });
  if (inserted.count === 0) {
    const winner = await tx.ledgerTransfer.findUniqueOrThrow({ where: { idempotencyKey: input.idempotencyKey } });
    return { transfer: sameOrConflict(winner, input, plan), created: false };
  }
  await tx.ledgerEntry.createMany({
    data: entries.map((e) => ({
      issuerId: input.issuerId,
      transferId: transfer.id,
      accountId: e.accountId,
      amountMinor: BigInt(e.amountMinor),
      createdAt: input.at,
    })),
  });
  for (const entry of [...entries].sort((a, b) => (a.accountId < b.accountId ? -1 : 1))) {
    const delta = balanceDelta(locked.get(entry.accountId)!.normalSide, entry.amountMinor);
    try {
      await tx.ledgerAccount.update({
        where: { id: entry.accountId },
        data: { balanceMinor: { increment: BigInt(delta) } },
      });
    } catch (err) {
      // The CHECK is the backstop of the check above; both must agree.
      if (isCheckViolation(err))
        throw new LedgerError(LEDGER_INSUFFICIENT_BALANCE, `account ${entry.accountId} would go negative`, {
          accountId: entry.accountId,
        });
      throw err;
    }
  }
  // Counted when written; a transaction rolled back later still counts (an attempt that
  // the trial balance never sees), which is the right bias for an operations counter.
  ledgerPostings.inc({ kind: input.kind });
  return { transfer, created: true };
}

/** postTransfer in a transaction of its own. */
export function postTransferInNewTransaction(db: Db, input: PostTransferInput): Promise<PostedTransfer> {
  return inTransaction(db, (tx) => postTransfer(tx, input));
}

function validateAndPlan(input: PostTransferInput): TransferPlan {
  if (!input.idempotencyKey || input.idempotencyKey.length > 500) {
    throw new LedgerError(LEDGER_INVALID_INPUT, 'idempotencyKey must be 1 to 500 characters', {
      field: 'idempotencyKey',
    });
  }
  if (!isTransferKind(input.kind))
    throw new LedgerError(LEDGER_INVALID_INPUT, `unknown transfer kind ${input.kind}`, { field: 'kind' });
  if (!(input.at instanceof Date) || Number.isNaN(input.at.getTime()))
    throw new LedgerError(LEDGER_INVALID_INPUT, 'at must be a valid Date', { field: 'at' });
  requirePositiveMinor(input.amountMinor);
  try {
    return planTransfer(input.kind, { issuerId: input.issuerId, chgId: input.chgId, merchantId: input.merchantId });
  } catch (err) {
    throw new LedgerError(LEDGER_INVALID_INPUT, (err as Error).message);
  }
}

/** Content is what the money does: kind, both accounts and the amount. Reward event and
 *  transaction ids are references, not content, so a retry that re-generated them still replays. */
function sameOrConflict(row: LedgerTransfer, input: PostTransferInput, plan: TransferPlan): Transfer {
  const stored = toTransfer(row);
  const same =
    stored.kind === input.kind &&
    stored.debitAccountId === plan.debit.id &&
    stored.creditAccountId === plan.credit.id &&
    stored.amountMinor === input.amountMinor;
  if (!same) {
    throw new LedgerError(
      LEDGER_IDEMPOTENCY_CONFLICT,
      `idempotency key ${input.idempotencyKey} was already used for a different transfer`,
      {
        idempotencyKey: input.idempotencyKey,
        stored: {
          kind: stored.kind,
          debitAccountId: stored.debitAccountId,
          creditAccountId: stored.creditAccountId,
          amountMinor: stored.amountMinor,
        },
        requested: {
          kind: input.kind,
          debitAccountId: plan.debit.id,
          creditAccountId: plan.credit.id,
          amountMinor: input.amountMinor,
        },
      },
    );
  }
  return stored;
}
