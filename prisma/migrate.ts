// Applies prisma/migrations/<name>/migration.sql in name order. We cannot use
// `prisma migrate deploy` offline (it needs the downloaded schema engine), so this runner
// keeps the same bookkeeping table, `_prisma_migrations`, with the same checksums: where
// the engine is available, `prisma migrate deploy` agrees with what we applied. A migration
// may have a data step (prisma/data-steps.ts): code that runs in its transaction before its SQL,
// for what SQL cannot do (sealing secrets under a key only the environment holds).
import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { KeyRing } from '../core/crypto/key-ring';
import { DATA_STEPS, type DataStep } from './data-steps';

export const MIGRATIONS_DIR = join(__dirname, 'migrations');
// Any constant works; it only has to be the same in every process that migrates.
const MIGRATION_LOCK_KEY = 72707369;

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
}

export class MigrationChecksumError extends Error {}

interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(dir, entry.name, 'migration.sql')))
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

export async function migrate(databaseUrl: string, options: MigrateOptions = {}): Promise<MigrationResult> {
  const { dir = MIGRATIONS_DIR, dataSteps = DATA_STEPS } = options;
  const client = new pg.Client({ connectionString: databaseUrl });
  // A lost connection fails the statement in flight, which fails the run; its 'error' event must
  // not also be thrown at the process by an emitter nobody listens to.
  client.on('error', () => undefined);
  await client.connect();
  try {
    // A lock held by this connection across transactions, so that two processes starting together
    // apply each migration once.
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
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
    for (const migration of listMigrations(dir)) {
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
      const report = await applyOne(client, migration, async () =>
        dataSteps[migration.name]?.({ client, webhookSecretKeys: options.webhookSecretKeys }),
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
  dataStep: () => Promise<string | void>,
): Promise<string | undefined> {
  await client.query('BEGIN');
  try {
    const report = (await dataStep()) ?? undefined;
    await client.query(migration.sql);
    await client.query(
      `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, logs, applied_steps_count)
       VALUES ($1, $2, now(), $3, $4, 1)`,
      [randomUUID(), migration.checksum, migration.name, report ?? null],
    );
    await client.query('COMMIT');
    return report;
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  }
}
