// The Prisma client factory. Prisma 7 talks to PostgreSQL through the pg driver adapter,
// so no native query engine is needed at run time. The pg pool under it is ours, so the few
// hottest statements can run on it directly as named prepared statements (prisma/hot.ts).
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from './generated/client';
import { boundedClient, boundSession, DEFAULT_DATABASE_TIMEOUTS, type DatabaseTimeouts } from './bounded-client';

export type Db = PrismaClient;

const pools = new WeakMap<Db, pg.Pool>();

/**
 * A Prisma client on a pool of at most `poolSize` connections, each bound by `timeouts`
 * (prisma/bounded-client.ts). Getting a connection, a free one of the pool's or a new one, is
 * bound by the connect time-out: while the server does not answer, connections are not freed
 * nor opened, and requests would otherwise queue behind each other without end.
 */
export function createDb(
  databaseUrl: string,
  poolSize = 10,
  timeouts: DatabaseTimeouts = DEFAULT_DATABASE_TIMEOUTS,
): Db {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: poolSize,
    connectionTimeoutMillis: timeouts.connectTimeoutMs,
    Client: boundedClient(timeouts),
    onConnect: boundSession(timeouts),
  });
  // An idle connection the server ends is re-emitted by the pool as 'error', after the pool has
  // already dropped it; the next check-out opens a fresh one. Prisma's adapter listens too, but
  // only from its first query on, and our raw-SQL paths (prisma/hot.ts) may run before that.
  pool.on('error', () => undefined);
  // The adapter ends the pool when the client disconnects.
  const adapter = new PrismaPg(pool, { disposeExternalPool: true });
  // Waiting for a pooled connection is normal under load (a burst of activities); Prisma's
  // default 2 s would turn that wait into retries. The pool's own bound applies to it.
  const db = new PrismaClient({
    adapter,
    transactionOptions: { maxWait: timeouts.connectTimeoutMs, timeout: timeouts.transactionTimeoutMs },
  });
  pools.set(db, pool);
  return db;
}

/** The pg pool a client created by createDb runs on. */
export function poolOf(db: Db): pg.Pool {
  const pool = pools.get(db);
  if (!pool) throw new Error('this client was not made by createDb: it has no pool of ours');
  return pool;
}
