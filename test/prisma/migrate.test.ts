import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { migrate, listMigrations, MigrationChecksumError } from '../../prisma/migrate';
import { freshDatabase } from '../helpers/databases';

describe('prisma/migrate', () => {
  it('applies every migration once, records checksums, and is a no-op the second time', async () => {
    const url = await freshDatabase('migrate_test');
    const first = await migrate(url);
    assert.deepEqual(
      first.applied,
      listMigrations().map((m) => m.name),
    );
    const second = await migrate(url);
    assert.deepEqual(second.applied, []);
    assert.equal(second.alreadyApplied.length, first.applied.length);
  });

  it('applies concurrently started runs exactly once (advisory lock)', async () => {
    const url = await freshDatabase('migrate_test');
    const results = await Promise.all([migrate(url), migrate(url), migrate(url)]);
    const appliedCounts = results.map((r) => r.applied.length).sort();
    assert.deepEqual(appliedCounts.slice(0, 2), [0, 0]);
    assert.equal(appliedCounts[2], listMigrations().length);
  });

  it('refuses a migration edited after it was applied, and rolls back a failing one', async () => {
    const url = await freshDatabase('migrate_test');
    const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
    mkdirSync(join(dir, '001_a'));
    writeFileSync(join(dir, '001_a', 'migration.sql'), 'CREATE TABLE a (id int);');
    await migrate(url, { dir });
    writeFileSync(join(dir, '001_a', 'migration.sql'), 'CREATE TABLE a (id bigint);');
    await assert.rejects(migrate(url, { dir }), MigrationChecksumError);

    writeFileSync(join(dir, '001_a', 'migration.sql'), 'CREATE TABLE a (id int);');
    mkdirSync(join(dir, '002_b'));
    writeFileSync(join(dir, '002_b', 'migration.sql'), 'CREATE TABLE b (id int); SELECT * FROM missing_table;');
    // The failing statement's own error, naming what is missing: not just any failure.
    await assert.rejects(migrate(url, { dir }), /missing_table/);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rowCount } = await client.query(`SELECT 1 FROM information_schema.tables WHERE table_name = 'b'`);
    await client.end();
    assert.equal(rowCount, 0, 'the failed migration left a table behind');
  });

  it("runs a migration's data step before its SQL, in the migration's transaction", async () => {
    const url = await freshDatabase('migrate_test');
    const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
    for (const [name, sql] of [
      ['001_a', 'CREATE TABLE a (id int);'],
      ['002_b', 'CREATE TABLE b AS SELECT id FROM a;'],
      ['003_c', 'CREATE TABLE c (id int);'],
    ]) {
      mkdirSync(join(dir, name));
      writeFileSync(join(dir, name, 'migration.sql'), sql);
    }
    const ran: string[] = [];
    const dataSteps = {
      '002_b': async ({ client }: { client: pg.ClientBase }) => {
        ran.push('002_b');
        await client.query('INSERT INTO a VALUES (7)');
      },
      '003_c': async ({ client }: { client: pg.ClientBase }) => {
        await client.query('INSERT INTO a VALUES (8)');
        throw new Error('step failed');
      },
    };
    await assert.rejects(migrate(url, { dir, dataSteps }), /step failed/);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      assert.deepEqual(
        (await client.query('SELECT id FROM b')).rows,
        [{ id: 7 }],
        "the step's row was there for the SQL",
      );
      assert.deepEqual((await client.query('SELECT id FROM a')).rows, [{ id: 7 }], 'the failed step left nothing');
      assert.equal((await client.query(`SELECT 1 FROM information_schema.tables WHERE table_name = 'c'`)).rowCount, 0);
    } finally {
      await client.end();
    }
    await assert.rejects(migrate(url, { dir, dataSteps }), /step failed/);
    assert.deepEqual(ran, ['002_b'], 'an applied migration does not run its step again');
  });
});
