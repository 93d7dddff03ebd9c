import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { migrate, listMigrations, MigrationChecksumError } from '../../prisma/migrate';
import { testDatabaseUrl } from '../helpers/env';

async function freshDatabase(): Promise<string> {
  const name = `migrate_test_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  const client = new pg.Client({ connectionString: testDatabaseUrl() });
  await client.connect();
  await client.query(`CREATE DATABASE "${name}"`);
  await client.end();
  const url = new URL(testDatabaseUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

describe('prisma/migrate', () => {
  it('applies every migration once, records checksums, and is a no-op the second time', async () => {
    const url = await freshDatabase();
    const first = await migrate(url);
    assert.deepEqual(first.applied, listMigrations().map((m) => m.name));
    const second = await migrate(url);
    assert.deepEqual(second.applied, []);
    assert.equal(second.alreadyApplied.length, first.applied.length);
  });

  it('applies concurrently started runs exactly once (advisory lock)', async () => {
    const url = await freshDatabase();
    const results = await Promise.all([migrate(url), migrate(url), migrate(url)]);
    const appliedCounts = results.map((r) => r.applied.length).sort();
    assert.deepEqual(appliedCounts.slice(0, 2), [0, 0]);
    assert.equal(appliedCounts[2], listMigrations().length);
  });

  it('refuses a migration edited after it was applied, and rolls back a failing one', async () => {
    const url = await freshDatabase();
    const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
    mkdirSync(join(dir, '001_a'));
    writeFileSync(join(dir, '001_a', 'migration.sql'), 'CREATE TABLE a (id int);');
    await migrate(url, dir);
    writeFileSync(join(dir, '001_a', 'migration.sql'), 'CREATE TABLE a (id bigint);');
    await assert.rejects(migrate(url, dir), MigrationChecksumError);

    writeFileSync(join(dir, '001_a', 'migration.sql'), 'CREATE TABLE a (id int);');
    mkdirSync(join(dir, '002_b'));
    writeFileSync(join(dir, '002_b', 'migration.sql'), 'CREATE TABLE b (id int); SELECT * FROM missing_table;');
    // The failing statement's own error, naming what is missing: not just any failure.
    await assert.rejects(migrate(url, dir), /missing_table/);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rowCount } = await client.query(`SELECT 1 FROM information_schema.tables WHERE table_name = 'b'`);
    await client.end();
    assert.equal(rowCount, 0, 'the failed migration left a table behind');
  });
});
