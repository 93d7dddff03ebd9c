// Accounts are created on first use; their deterministic ids make concurrent first uses
// converge on one row (INSERT ... ON CONFLICT DO NOTHING).
import { Prisma } from '../../../prisma/generated/client';
import type { AccountKind, AccountRef, NormalSide, PurchaseLockOrder } from '../../ledger';
import { fromDbMinor } from '../../ledger';
import type { SqlTx } from '../../../prisma/sql-transaction';
import type { KnownAccounts } from './known-accounts';

/**
 * Inserts missing accounts in id order. A new row is held by its inserting transaction until
 * commit, so concurrent first uses wait on each other here: in the same order as the locks
 * below, which is what keeps them from deadlocking.
 */
export async function ensureAccounts(tx: SqlTx, refs: readonly AccountRef[], at: Date): Promise<void> {
  const sorted = [...new Map(refs.map((r) => [r.id, r])).values()].sort((a, b) =>
    a.id < b.id ? -1 : a.id > b.id ? 1 : 0,
  );
  if (sorted.length === 0) return;
  // WITH ORDINALITY ... ORDER BY: the rows go in (and take their locks) in id order.
  await tx.$executeRaw`
    INSERT INTO ledger_account (id, issuer_id, kind, chg_id, merchant_id, normal_side, created_at)
    SELECT a.id, a.issuer_id, a.kind, a.chg_id, a.merchant_id, a.normal_side, ${at}::timestamptz
      FROM unnest(${sorted.map((r) => r.id)}::text[], ${sorted.map((r) => r.issuerId)}::text[], ${sorted.map((r) => r.kind)}::text[],
                  ${sorted.map((r) => r.chgId)}::text[], ${sorted.map((r) => r.merchantId)}::text[], ${sorted.map((r) => r.normalSide)}::text[])
             WITH ORDINALITY AS a(id, issuer_id, kind, chg_id, merchant_id, normal_side, n)
     ORDER BY a.n
    ON CONFLICT (id) DO NOTHING`;
}

export interface LockedAccount {
  id: string;
  kind: AccountKind;
  normalSide: NormalSide;
  balanceMinor: number;
}

/**
 * Every account a posting transaction may touch, created if missing and locked, all in id
 * order and before any transfer: the first purchases of a new merchant or group, arriving
 * together, then queue behind each other instead of deadlocking (40P01) on rows that one
 * transaction inserted and another wanted to lock.
 */
export async function ensureAndLockAccounts(
  tx: SqlTx,
  refs: readonly AccountRef[],
  at: Date,
): Promise<Map<string, LockedAccount>> {
  await ensureAccounts(tx, refs, at);
  return lockAccounts(
    tx,
    refs.map((r) => r.id),
  );
}

/** Locks accounts in id order: every poster takes locks in the same order, so two
 *  transfers touching the same pair of accounts cannot deadlock. */
export async function lockAccounts(tx: SqlTx, ids: readonly string[]): Promise<Map<string, LockedAccount>> {
  const sorted = [...new Set(ids)].sort();
  const rows = await tx.$queryRaw<{ id: string; kind: AccountKind; normal_side: NormalSide; balance_minor: bigint }[]>`
    SELECT id, kind, normal_side, balance_minor FROM ledger_account
     WHERE id IN (${Prisma.join(sorted)}) ORDER BY id FOR UPDATE`;
  return new Map(
    rows.map((r) => [
      r.id,
      { id: r.id, kind: r.kind, normalSide: r.normal_side, balanceMinor: fromDbMinor(r.balance_minor) },
    ]),
  );
}

/**
 * A purchase's accounts for its settlement (purchaseLockOrder in core/ledger/accounts.ts):
 * creates those this process has not seen yet (in id order), then locks the group's
 * liability accounts, and what the group owes when it has such an account. The merchant's
 * receivable is returned unlocked with no balance read: the write statement locks it and adds
 * to it, and a missing row fails that statement's balance count. The accounts created only when
 * used (commission, the issuer's funding) are returned the same way, not created here
 * (ensureUsedAccounts does, once the posting is known).
 */
export async function lockPurchaseAccounts(
  tx: SqlTx,
  order: PurchaseLockOrder,
  at: Date,
  known?: KnownAccounts,
): Promise<Map<string, LockedAccount>> {
  const refs = [...order.lockedFirst, ...order.lockedAtWrite];
  const missing = known ? refs.filter((r) => !known.has(r.id)) : refs;
  if (missing.length > 0) await ensureAccounts(tx, missing, at);
  const locked = await lockAccounts(
    tx,
    [...order.lockedFirst, ...order.lockedIfPresent].map((r) => r.id),
  );
  // A known account missing here was never created: forget it and fail this attempt (its
  // retry creates it). Callers add accounts to `known` only after their commit.
  const lost = order.lockedFirst.filter((r) => !locked.has(r.id));
  if (lost.length > 0) {
    for (const r of lost) known?.delete(r.id);
    throw new Error(`ledger accounts ${lost.map((r) => r.id).join(', ')} not found`);
  }
  for (const r of [...order.lockedAtWrite, ...order.createdWhenUsed])
    locked.set(r.id, { id: r.id, kind: r.kind, normalSide: r.normalSide, balanceMinor: Number.NaN });
  return locked;
}

/**
 * Creates the accounts of `createdWhenUsed` that a posting is about to touch and this process has
 * not seen yet (in id order; they sort after every account the transaction holds, so waiting here
 * for another first use keeps the one lock order). Returns the ids that exist once it committed.
 */
export async function ensureUsedAccounts(
  tx: SqlTx,
  candidates: readonly AccountRef[],
  used: ReadonlySet<string>,
  at: Date,
  known?: KnownAccounts,
): Promise<string[]> {
  const needed = candidates.filter((r) => used.has(r.id));
  const missing = known ? needed.filter((r) => !known.has(r.id)) : needed;
  if (missing.length > 0) await ensureAccounts(tx, missing, at);
  return needed.map((r) => r.id);
}
