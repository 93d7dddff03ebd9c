import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import {
  migrate,
  listMigrations,
  MigrationChecksumError,
  MigrationFormatError,
  MigrationLockTimeoutError,
  NO_TRANSACTION_MARKER,
} from '../../prisma/migrate';
import { freshDatabase } from '../helpers/databases';

/** A folder of migrations, name → SQL, as the runner reads prisma/migrations. */
function migrationsDir(migrations: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
  for (const [name, sql] of Object.entries(migrations)) {
    mkdirSync(join(dir, name));
    writeFileSync(join(dir, name, 'migration.sql'), sql);
  }
  return dir;
}

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

const recorded = (url: string) =>
  withClient(url, async (c) =>
    (
      await c.query<{ migration_name: string; checksum: string }>(
        `SELECT migration_name, checksum FROM "_prisma_migrations" WHERE finished_at IS NOT NULL ORDER BY migration_name`,
      )
    ).rows.map((r) => [r.migration_name, r.checksum]),
  );

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

  describe('lock time-out (docs/operating/upgrading.md, "Migrations that cannot lock a busy table")', () => {
    it('fails a migration that waits on a lock another session holds, at once, and applies it once the lock is gone', async () => {
      const url = await freshDatabase('migrate_test');
      await migrate(url, { dir: migrationsDir({ '001_a': 'CREATE TABLE a (id int);' }) });
      const dir = migrationsDir({
        '001_a': 'CREATE TABLE a (id int);',
        '002_b': 'CREATE TABLE b (id int); ALTER TABLE a ADD COLUMN note text;',
      });
      // A reader in the middle of a long transaction: its ACCESS SHARE lock blocks the ALTER's
      // ACCESS EXCLUSIVE one, which would in turn block every later query of the table.
      const reader = new pg.Client({ connectionString: url });
      await reader.connect();
      try {
        await reader.query('BEGIN');
        await reader.query('SELECT count(*) FROM a');
        const started = Date.now();
        await assert.rejects(
          migrate(url, { dir, lockTimeoutMs: 300 }),
          (err) =>
            err instanceof MigrationLockTimeoutError &&
            /002_b waited more than 300 ms for a lock/.test(err.message) &&
            /lock timeout/.test(err.message),
        );
        assert.ok(Date.now() - started < 10_000, `it failed only after ${Date.now() - started} ms`);
        assert.deepEqual(
          (await recorded(url)).map(([name]) => name),
          ['001_a'],
          'the migration that timed out is not recorded',
        );
        const { rowCount } = await withClient(url, (c) =>
          c.query(`SELECT 1 FROM information_schema.tables WHERE table_name = 'b'`),
        );
        assert.equal(rowCount, 0, 'its statements before the ALTER were rolled back');
        await reader.query('COMMIT');
      } finally {
        await reader.end();
      }
      assert.deepEqual((await migrate(url, { dir, lockTimeoutMs: 300 })).applied, ['002_b']);
    });

    it("gives a data step's own LOCK TABLE the same time-out", async () => {
      const url = await freshDatabase('migrate_test');
      const dir = migrationsDir({ '001_a': 'CREATE TABLE a (id int);', '002_b': 'SELECT 1;' });
      await migrate(url, { dir: migrationsDir({ '001_a': 'CREATE TABLE a (id int);' }) });
      const dataSteps = {
        '002_b': async ({ client }: { client: pg.ClientBase }) => {
          await client.query('LOCK TABLE a IN EXCLUSIVE MODE');
        },
      };
      const writer = new pg.Client({ connectionString: url });
      await writer.connect();
      try {
        await writer.query('BEGIN');
        await writer.query('INSERT INTO a VALUES (1)');
        await assert.rejects(migrate(url, { dir, dataSteps, lockTimeoutMs: 200 }), MigrationLockTimeoutError);
      } finally {
        await writer.end();
      }
    });
  });

  describe('migrations outside a transaction (CREATE INDEX CONCURRENTLY)', () => {
    const table = 'CREATE TABLE entry (id int PRIMARY KEY, account text NOT NULL);';
    const index = `${NO_TRANSACTION_MARKER}\n-- Built while writers go on.\nCREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS entry_account_key ON entry (account);\nCREATE INDEX CONCURRENTLY IF NOT EXISTS entry_id_account_idx ON entry (id, account);\n`;

    it('applies one statement at a time and records it with its checksum like the others', async () => {
      const url = await freshDatabase('migrate_test');
      const dir = migrationsDir({ '001_entry': table, '002_entry_index': index });
      const result = await migrate(url, { dir });
      assert.deepEqual(result.applied, ['001_entry', '002_entry_index']);
      assert.deepEqual(
        await recorded(url),
        listMigrations(dir).map((m) => [m.name, m.checksum]),
      );
      const indexes = await withClient(
        url,
        async (c) =>
          (
            await c.query<{ relname: string; indisvalid: boolean }>(
              `SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
              WHERE c.relname IN ('entry_account_key', 'entry_id_account_idx') ORDER BY 1`,
            )
          ).rows,
      );
      assert.deepEqual(indexes, [
        { relname: 'entry_account_key', indisvalid: true },
        { relname: 'entry_id_account_idx', indisvalid: true },
      ]);
      assert.deepEqual((await migrate(url, { dir })).applied, []);
    });

    it('is run again from the top after failing halfway: an index left INVALID is dropped and built again', async () => {
      const url = await freshDatabase('migrate_test');
      const dir = migrationsDir({
        '001_entry': `${table} INSERT INTO entry VALUES (1, 'same'), (2, 'same');`,
        '002_entry_index': index,
      });
      // The unique build fails on the duplicate and leaves its index behind, INVALID.
      await assert.rejects(
        migrate(url, { dir }),
        /002_entry_index failed at statement 1 of 2 \(could not create unique index "entry_account_key"/,
      );
      const validity = () =>
        withClient(url, async (c) =>
          (
            await c.query<{ indisvalid: boolean }>(
              `SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = 'entry_account_key'`,
            )
          ).rows.map((r) => r.indisvalid),
        );
      assert.deepEqual(await validity(), [false]);
      assert.deepEqual(
        (await recorded(url)).map(([name]) => name),
        ['001_entry'],
      );
      await withClient(url, (c) => c.query(`UPDATE entry SET account = 'other' WHERE id = 2`));
      assert.deepEqual((await migrate(url, { dir })).applied, ['002_entry_index']);
      assert.deepEqual(await validity(), [true], 'the invalid index was replaced by a valid one');
      await assert.rejects(
        withClient(url, (c) => c.query(`INSERT INTO entry VALUES (3, 'other')`)),
        /duplicate key value violates unique constraint "entry_account_key"/,
      );
    });

    it('gives it the lock time-out too, and refuses one that a re-run would not repeat safely', async () => {
      const url = await freshDatabase('migrate_test');
      await migrate(url, { dir: migrationsDir({ '001_entry': table }) });
      const holder = new pg.Client({ connectionString: url });
      await holder.connect();
      try {
        // SHARE UPDATE EXCLUSIVE conflicts with the concurrent build's own lock of that mode.
        await holder.query('BEGIN');
        await holder.query('LOCK TABLE entry IN SHARE UPDATE EXCLUSIVE MODE');
        await assert.rejects(
          migrate(url, { dir: migrationsDir({ '001_entry': table, '002_entry_index': index }), lockTimeoutMs: 200 }),
          MigrationLockTimeoutError,
        );
      } finally {
        await holder.end();
      }
      const unsafe = migrationsDir({
        '001_entry': table,
        '002_entry_index': `${NO_TRANSACTION_MARKER}\nCREATE INDEX CONCURRENTLY entry_account_idx ON entry (account);`,
      });
      await assert.rejects(migrate(url, { dir: unsafe }), MigrationFormatError);
      const withStep = migrationsDir({ '001_entry': table, '002_entry_index': index });
      await assert.rejects(
        migrate(url, { dir: withStep, dataSteps: { '002_entry_index': async () => undefined } }),
        /runs outside a transaction; a data step needs one/,
      );
    });
  });
});
