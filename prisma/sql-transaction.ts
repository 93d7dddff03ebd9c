// A database transaction on our pg pool for the lifecycle's hottest steps (settle, preview),
// which are raw SQL from end to end, and single statements for the webhook relay's records.
// Prisma's interactive transaction costs several times the CPU of pg's own for the same few raw
// statements, and the worker posts every purchase, so that overhead was the largest single cost
// we could remove (docs/decisions/0003-settlement-in-four-statements.md). The handle has the two methods those steps use, with the same
// contract as Prisma's: tagged templates or Prisma.sql fragments in, rows out with bigint as
// BigInt and numeric as Decimal, so a step's code runs unchanged on either.
import pg from 'pg';
import { Prisma } from './generated/client';
import { poolOf, type Db } from './client';
import { HeldConnection } from './held-connection';

/** What the raw-SQL steps need of a transaction: Prisma's TransactionClient has it too. */
export interface SqlTx {
  $queryRaw<T = unknown>(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]): PromiseLike<T>;
  $executeRaw(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]): PromiseLike<number>;
}

// Like Prisma's raw queries: a caller that reads a bigint or a sum() gets the same JS type.
const INT8 = 20;
const INT8_ARRAY = 1016;
const NUMERIC = 1700;
// pg's typings list the scalar type ids only; array ids (1016) are just as valid at run time.
const builtinParser = pg.types.getTypeParser as (oid: number, format?: 'text' | 'binary') => (text: string) => unknown;
const parseInt8Array = builtinParser(INT8_ARRAY) as (text: string) => Array<string | null>;
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8) return (text: string) => BigInt(text);
    if (oid === INT8_ARRAY) return (text: string) => parseInt8Array(text).map((v) => (v === null ? null : BigInt(v)));
    if (oid === NUMERIC) return (text: string) => new Prisma.Decimal(text);
    return builtinParser(oid, format);
  },
} as pg.CustomTypesConfig;

export async function sqlTransaction<T>(db: Db, fn: (tx: SqlTx) => Promise<T>): Promise<T> {
  // Held, not merely checked out: a connection the server ends mid-transaction fails this
  // transaction with DatabaseConnectionLost (retryable) rather than the process.
  const connection = await HeldConnection.checkOut(poolOf(db));
  let broken: Error | undefined;
  try {
    // Each statement is bound by the pool's statement time-out (prisma/bounded-client.ts).
    await connection.query('BEGIN');
    const result = await fn(handle(connection));
    await connection.query('COMMIT');
    return result;
  } catch (err) {
    // A connection that cannot even roll back is dropped, never handed to the next caller.
    if (!connection.lost) {
      await connection.query('ROLLBACK').catch((rollbackFailure: Error) => (broken = rollbackFailure));
    }
    throw err;
  } finally {
    connection.release(broken);
  }
}

/** One statement on the pool, outside any transaction, read back as Prisma's raw queries are. */
export async function sqlQuery<T>(db: Db, query: Prisma.Sql): Promise<T> {
  const result = await poolOf(db).query({ text: query.text, values: query.values as unknown[], types });
  return result.rows as T;
}

function handle(connection: HeldConnection): SqlTx {
  const run = async (query: TemplateStringsArray | Prisma.Sql, values: unknown[]) => {
    const sql = query instanceof Prisma.Sql ? query : Prisma.sql(query, ...values);
    return connection.query({ text: sql.text, values: sql.values as unknown[], types });
  };
  return {
    $queryRaw: async <T>(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]) =>
      (await run(query, values)).rows as T,
    $executeRaw: async (query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]) =>
      (await run(query, values)).rowCount ?? 0,
  };
}
