// The transaction handle every ledger effect takes, so a caller can combine ledger writes
// with its own in ONE database transaction. Wrappers open one when the caller has none.
import type { Prisma } from '../../../prisma/generated/client';
import type { Db } from '../../../prisma/client';
import type { SqlTx } from '../../../prisma/sql-transaction';
import { classifyFailure } from '../../failures';

export type Tx = Prisma.TransactionClient;

/** Runs `fn` in a transaction; a unique violation (two writers raced on one idempotency
 *  key) is retried once, and the retry finds the winner's row and compares content. */
export async function inTransaction<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const attempts = 2;
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.$transaction(fn);
    } catch (err) {
      if (attempt >= attempts || classifyFailure(err) !== 'unique_violation') throw err;
    }
  }
}

/** Serialises operations that share an idempotency key but cannot claim it with a single
 *  insert (a draw decides its amount before the transfer exists). Released at commit. */
export async function lockIdempotencyKey(tx: Pick<SqlTx, '$queryRaw'>, key: string): Promise<void> {
  await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))::text AS locked`;
}

/** SQLSTATE 23514: a CHECK constraint rejected the row. */
export function isCheckViolation(err: unknown): boolean {
  let e = err as { code?: unknown; message?: unknown; cause?: unknown } | null | undefined;
  for (let depth = 0; e && depth < 8; e = e.cause as typeof e, depth++) {
    if (e.code === '23514' || /23514|violates check constraint/.test(String(e.message ?? ''))) return true;
  }
  return false;
}
