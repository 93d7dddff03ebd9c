// Databases of their own, beside the run's, for tests that must see a whole table (migrations,
// every endpoint's sealing key): created empty on the run's server, dropped with it.
import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { testDatabaseUrl } from './env';
import { listMigrations, migrate, MIGRATIONS_DIR } from '../../prisma/migrate';

export async function freshDatabase(prefix: string): Promise<string> {
  const name = `${prefix}_${Date.now()}_${randomUUID().slice(0, 8)}`;
  const client = new pg.Client({ connectionString: testDatabaseUrl() });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(testDatabaseUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * A fresh database migrated up to, not including, `migration`: as the release before it left
 * the schema, for a test that writes rows the old way and then runs the rest.
 */
export async function databaseBefore(prefix: string, migration: string): Promise<string> {
  const url = await freshDatabase(prefix);
  const before = mkdtempSync(join(tmpdir(), 'migrations-before-'));
  for (const m of listMigrations().filter((m) => m.name < migration))
    cpSync(join(MIGRATIONS_DIR, m.name), join(before, m.name), { recursive: true });
  await migrate(url, { dir: before });
  return url;
}
