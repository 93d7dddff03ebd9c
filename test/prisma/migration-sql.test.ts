import assert from 'node:assert/strict';
import {
  checkOutsideTransaction,
  concurrentIndex,
  MigrationFormatError,
  NO_TRANSACTION_MARKER,
  runsOutsideTransaction,
  splitStatements,
} from '../../prisma/migration-sql';
import { listMigrations } from '../../prisma/migrate';

describe('prisma/migration-sql', () => {
  describe('runsOutsideTransaction', () => {
    it('finds the marker among the comment lines before the first statement, and only there', () => {
      assert.equal(runsOutsideTransaction(`${NO_TRANSACTION_MARKER}\nCREATE INDEX CONCURRENTLY x ON t (a);`), true);
      assert.equal(
        runsOutsideTransaction(
          `-- Builds an index without blocking writers.\n\n  ${NO_TRANSACTION_MARKER.toUpperCase()}\nSELECT 1;`,
        ),
        true,
      );
      assert.equal(runsOutsideTransaction(`SELECT 1;\n${NO_TRANSACTION_MARKER}\n`), false);
      assert.equal(runsOutsideTransaction('-- migrate: no transactions please\nSELECT 1;'), false);
      assert.equal(runsOutsideTransaction(''), false);
    });

    it('leaves every migration of the repository in a transaction unless it says otherwise', () => {
      for (const migration of listMigrations())
        assert.equal(migration.outsideTransaction !== undefined, runsOutsideTransaction(migration.sql), migration.name);
    });
  });

  describe('splitStatements', () => {
    it('splits at semicolons outside quotes, dollar quotes and comments, and drops empty chunks', () => {
      const sql = [
        '-- header; with a semicolon',
        "INSERT INTO t VALUES ('a;b', 'it''s; fine');",
        'CREATE FUNCTION f() RETURNS int AS $body$ SELECT 1; $body$ LANGUAGE sql;',
        'DO $$ BEGIN PERFORM 1; END $$;',
        '/* block; comment */ SELECT "odd;name" FROM t;',
        ';',
        '-- trailing comment only',
      ].join('\n');
      assert.deepEqual(splitStatements(sql), [
        "-- header; with a semicolon\nINSERT INTO t VALUES ('a;b', 'it''s; fine')",
        'CREATE FUNCTION f() RETURNS int AS $body$ SELECT 1; $body$ LANGUAGE sql',
        'DO $$ BEGIN PERFORM 1; END $$',
        '/* block; comment */ SELECT "odd;name" FROM t',
      ]);
    });

    it('keeps a last statement without its semicolon', () => {
      assert.deepEqual(splitStatements('SELECT 1;\nSELECT 2'), ['SELECT 1', 'SELECT 2']);
    });
  });

  describe('concurrentIndex', () => {
    it('names the index a concurrent build makes, quoted or not, and whether it says IF NOT EXISTS', () => {
      assert.deepEqual(
        concurrentIndex('-- why\nCREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "Ledger_Key" ON t (a)'),
        { name: 'Ledger_Key', ifNotExists: true },
      );
      assert.deepEqual(concurrentIndex('create index concurrently Entry_Idx on t (a)'), {
        name: 'entry_idx',
        ifNotExists: false,
      });
      assert.equal(concurrentIndex('CREATE INDEX entry_idx ON t (a)'), undefined);
      assert.equal(concurrentIndex('DROP INDEX CONCURRENTLY IF EXISTS entry_idx'), undefined);
    });
  });

  describe('checkOutsideTransaction', () => {
    it('refuses a concurrent index build that a re-run would repeat, and a migration with no statement', () => {
      assert.throws(
        () => checkOutsideTransaction('003_idx', ['CREATE INDEX CONCURRENTLY entry_idx ON t (a)']),
        (err) => err instanceof MigrationFormatError && /003_idx.*IF NOT EXISTS entry_idx/.test(err.message),
      );
      assert.throws(() => checkOutsideTransaction('004_empty', []), /004_empty has no statement/);
      checkOutsideTransaction('005_ok', ['CREATE INDEX CONCURRENTLY IF NOT EXISTS entry_idx ON t (a)']);
    });
  });
});
