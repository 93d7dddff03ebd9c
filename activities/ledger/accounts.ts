// Accounts are created on first use; their deterministic ids make concurrent first uses
// converge on one row (INSERT ... ON CONFLICT DO NOTHING).
import { Prisma } from '../../prisma/generated/client';
import type { AccountKind, AccountRef, NormalSide } from '../../core/ledger';
import { fromDbMinor } from '../../core/ledger';
import type { Tx } from './tx';

export async function ensureAccounts(tx: Tx, refs: readonly AccountRef[], at: Date): Promise<void> {
  await tx.ledgerAccount.createMany({
    data: refs.map((r) => ({ id: r.id, issuerId: r.issuerId, kind: r.kind, chgId: r.chgId, merchantId: r.merchantId, normalSide: r.normalSide, createdAt: at })),
    skipDuplicates: true,
  });
}

export interface LockedAccount {
  id: string;
  kind: AccountKind;
  normalSide: NormalSide;
  balanceMinor: number;
}

/** Locks accounts in id order: every poster takes locks in the same order, so two
 *  transfers touching the same pair of accounts cannot deadlock. */
export async function lockAccounts(tx: Tx, ids: readonly string[]): Promise<Map<string, LockedAccount>> {
  const sorted = [...new Set(ids)].sort();
  const rows = await tx.$queryRaw<{ id: string; kind: AccountKind; normal_side: NormalSide; balance_minor: bigint }[]>`
    SELECT id, kind, normal_side, balance_minor FROM ledger_account
     WHERE id IN (${Prisma.join(sorted)}) ORDER BY id FOR UPDATE`;
  return new Map(rows.map((r) => [r.id, { id: r.id, kind: r.kind, normalSide: r.normal_side, balanceMinor: fromDbMinor(r.balance_minor) }]));
}
