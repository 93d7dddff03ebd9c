// Applies prisma/migrations/<name>/migration.sql in name order. We cannot use
// `prisma migrate deploy` offline (it needs the downloaded schema engine), so this runner
// keeps the same bookkeeping table, `_prisma_migrations`, with the same checksums: where
// the engine is available, `prisma migrate deploy` agrees with what we applied. A migration
// may have a data step (prisma/data-steps.ts): code that runs in its transaction before its SQL,
// for what SQL cannot do (sealing secrets under a key only the environment holds).
//
// Every migration waits at most `lockTimeoutMs` for each lock it needs (PostgreSQL's
// lock_timeout): a migration queued behind a long transaction would otherwise hold every later
// reader and writer of the table behind its own lock request, so it fails instead and can be run
// again. A migration marked to run outside a transaction (prisma/migration-sql.ts; for
// `CREATE INDEX CONCURRENTLY`) is sent statement by statement; docs/operating/upgrading.md,
// "Migrations that cannot lock a busy table", says which changes need which.
import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { KeyRing } from '../core/crypto/key-ring';
import { DATA_STEPS, type DataStep } from './data-steps';
import {
  checkOutsideTransaction,
  concurrentIndex,
  DEFAULT_MIGRATION_LOCK_TIMEOUT_MS,
  MigrationFormatError,
  runsOutsideTransaction,
  splitStatements,
} from './migration-sql';

export { DEFAULT_MIGRATION_LOCK_TIMEOUT_MS, MigrationFormatError, NO_TRANSACTION_MARKER } from './migration-sql';

export const MIGRATIONS_DIR = join(__dirname, 'migrations');
// Any constant works; it only has to be the same in every process that migrates.
const MIGRATION_LOCK_KEY = 72707369;
const LOCK_NOT_AVAILABLE = '55P03';

export interface MigrationResult {
  applied: string[];
  alreadyApplied: string[];
  /** What data steps found that an operator must read (also kept in `_prisma_migrations.logs`). */
  reports: Array<{ migration: string; report: string }>;
}

export interface MigrateOptions {
  /** prisma/migrations unless given (tests). */
  dir?: string;
  /** WEBHOOK_SECRET_KEYS: needed only to seal webhook secrets stored before they were sealed. */
  webhookSecretKeys?: KeyRing;
  /** prisma/data-steps.ts unless given (tests). */
  dataSteps?: Readonly<Record<string, DataStep>>;
  /** How long each statement may wait for a lock (MIGRATION_LOCK_TIMEOUT); 0 waits as long as it takes. */
  lockTimeoutMs?: number;
}

export class MigrationChecksumError extends Error {}

/** A migration waited longer than its lock timeout for a lock another session holds. */
export class MigrationLockTimeoutError extends Error {}

interface Migration {
  name: string;
  sql: string;
  checksum: string;
  /** Its statements, one at a time outside a transaction; undefined: the whole script in one transaction. */
  outsideTransaction?: string[];
}

export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(dir, entry.name, 'migration.sql')))
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(join(dir, name, 'migration.sql'), 'utf8');
      const checksum = createHash('sha256').update(sql).digest('hex');
      if (!runsOutsideTransaction(sql)) return { name, sql, checksum };
      const statements = splitStatements(sql);
      checkOutsideTransaction(name, statements);
      return { name, sql, checksum, outsideTransaction: statements };
    });
}

/** How often a second runner asks for the migration lock while another holds it, and for how long. */
const MIGRATION_LOCK_POLL_MS = 200;
const MIGRATION_LOCK_WAIT_MS = 60 * 60_000;

/**
 * Waits for the migration lock by asking again and again rather than in one blocking
 * `pg_advisory_lock`: a session blocked in a statement keeps a transaction open, and a
 * `CREATE INDEX CONCURRENTLY` of the runner holding the lock waits for every such transaction to
 * end, which would be a deadlock. Between two asks this session holds no transaction.
 */
async function takeMigrationLock(client: pg.Client): Promise<void> {
  for (let waited = 0; waited < MIGRATION_LOCK_WAIT_MS; waited += MIGRATION_LOCK_POLL_MS) {
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [
      MIGRATION_LOCK_KEY,
    ]);
    if (rows[0].locked) return;
    await new Promise((resolve) => setTimeout(resolve, MIGRATION_LOCK_POLL_MS));
  }
  throw new Error(`another migration run has held the migration lock for ${MIGRATION_LOCK_WAIT_MS / 60_000} minutes`);
}

export async function migrate(databaseUrl: string, options: MigrateOptions = {}): Promise<MigrationResult> {
  const { dir = MIGRATIONS_DIR, dataSteps = DATA_STEPS, lockTimeoutMs = DEFAULT_MIGRATION_LOCK_TIMEOUT_MS } = options;
  if (!Number.isSafeInteger(lockTimeoutMs) || lockTimeoutMs < 0)
    throw new RangeError(`lockTimeoutMs must be a whole number of milliseconds (got ${lockTimeoutMs})`);
  // Read before connecting: a malformed migration stops the run before anything is applied.
  const migrations = listMigrations(dir);
  const client = new pg.Client({ connectionString: databaseUrl });
  // A lost connection fails the statement in flight, which fails the run; its 'error' event must
  // not also be thrown at the process by an emitter nobody listens to.
  client.on('error', () => undefined);
  await client.connect();
  try {
    // A lock held by this connection across transactions, so that two processes starting together
    // apply each migration once.
    await takeMigrationLock(client);
    await client.query(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
      "id" VARCHAR(36) PRIMARY KEY NOT NULL,
      "checksum" VARCHAR(64) NOT NULL,
      "finished_at" TIMESTAMPTZ,
      "migration_name" VARCHAR(255) NOT NULL,
      "logs" TEXT,
      "rolled_back_at" TIMESTAMPTZ,
      "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
      "applied_steps_count" INTEGER NOT NULL DEFAULT 0)`);
    const { rows } = await client.query<{ migration_name: string; checksum: string }>(
      `SELECT migration_name, checksum FROM "_prisma_migrations"
        WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    );
    const done = new Map(rows.map((r) => [r.migration_name, r.checksum]));
    const result: MigrationResult = { applied: [], alreadyApplied: [], reports: [] };
    for (const migration of migrations) {
      const recorded = done.get(migration.name);
      if (recorded !== undefined) {
        if (recorded !== migration.checksum) {
          throw new MigrationChecksumError(
            `Migration ${migration.name} was changed after it was applied; add a new migration instead.`,
          );
        }
        result.alreadyApplied.push(migration.name);
        continue;
      }
      const dataStep = migration.name in dataSteps ? dataSteps[migration.name] : undefined;
      if (migration.outsideTransaction && dataStep !== undefined)
        throw new MigrationFormatError(
          `Migration ${migration.name} runs outside a transaction; a data step needs one (prisma/data-steps.ts).`,
        );
      const report = await withLockTimeoutError(migration.name, lockTimeoutMs, () =>
        migration.outsideTransaction
          ? applyOutsideTransaction(client, migration, migration.outsideTransaction, lockTimeoutMs)
          : applyOne(client, migration, lockTimeoutMs, async () =>
              dataStep?.({ client, webhookSecretKeys: options.webhookSecretKeys }),
            ),
      );
      result.applied.push(migration.name);
      if (report) result.reports.push({ migration: migration.name, report });
    }
    return result;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await client.end();
  }
}

async function applyOne(
  client: pg.Client,
  migration: Migration,
  lockTimeoutMs: number,
  dataStep: () => Promise<string | void>,
): Promise<string | undefined> {
  await client.query('BEGIN');
  try {
    // LOCAL: ends with the transaction, so the advisory lock above is never under it.
    await client.query(`SET LOCAL lock_timeout = ${lockTimeoutMs}`);
    const report = (await dataStep()) ?? undefined;
    await client.query(migration.sql);
    await record(client, migration, report);
    await client.query('COMMIT');
    return report;
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  }
}

/**
 * One statement at a time, each its own transaction; recorded once the last one succeeded. A
 * failure leaves the statements before it applied and the migration unrecorded: the next run
 * starts it from the top, which its IF NOT EXISTS clauses make safe, and an index the failed
 * build left INVALID is dropped here before it is built again (an invalid index still exists,
 * so IF NOT EXISTS alone would keep it, unused by any query, forever).
 */
async function applyOutsideTransaction(
  client: pg.Client,
  migration: Migration,
  statements: string[],
  lockTimeoutMs: number,
): Promise<undefined> {
  await client.query(`SET lock_timeout = ${lockTimeoutMs}`);
  try {
    for (const [i, statement] of statements.entries()) {
      const index = concurrentIndex(statement);
      if (index) await dropInvalidIndex(client, index.name);
      try {
        await client.query(statement);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        throw Object.assign(
          new Error(
            `Migration ${migration.name} failed at statement ${i + 1} of ${statements.length} (${message}); ` +
              `the ${i} before it stay applied and it is not recorded: fix the cause and migrate again, it starts from the top.`,
            { cause: err },
          ),
          { code: (err as { code?: string }).code },
        );
      }
    }
    await record(client, migration, undefined);
    return undefined;
  } finally {
    // Not to hide the statement's own error should the connection be gone.
    await client.query('RESET lock_timeout').catch(() => undefined);
  }
}

/** Drops the index of that name in the search path if a failed concurrent build left it invalid. */
async function dropInvalidIndex(client: pg.Client, name: string): Promise<void> {
  const { rows } = await client.query<{ qualified: string }>(
    `SELECT format('%I.%I', n.nspname, c.relname) AS qualified
       FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relname = $1 AND n.nspname = ANY (current_schemas(false)) AND NOT i.indisvalid`,
    [name],
  );
  for (const { qualified } of rows) await client.query(`DROP INDEX CONCURRENTLY IF EXISTS ${qualified}`);
}

function record(client: pg.Client, migration: Migration, report: string | undefined) {
  return client.query(
    `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, logs, applied_steps_count)
     VALUES ($1, $2, now(), $3, $4, 1)`,
    [randomUUID(), migration.checksum, migration.name, report ?? null],
  );
}

/** A lock time-out becomes a MigrationLockTimeoutError that says what happened and what to do. */
async function withLockTimeoutError<T>(name: string, lockTimeoutMs: number, apply: () => Promise<T>): Promise<T> {
  try {
    return await apply();
  } catch (err) {
    if ((err as { code?: string }).code !== LOCK_NOT_AVAILABLE) throw err;
    const message = err instanceof Error ? err.message : String(err);
    throw new MigrationLockTimeoutError(
      `Migration ${name} waited more than ${lockTimeoutMs} ms for a lock another session holds (${message}), ` +
        'and stopped rather than queue every later query of that table behind it. Find the long transaction ' +
        '(pg_stat_activity), then migrate again; or raise MIGRATION_LOCK_TIMEOUT for this run.',
      { cause: err },
    );
  }
}
