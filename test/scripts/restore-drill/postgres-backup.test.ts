// The restore drill's comparison of the restored ledger with the source's at the backup, and how
// it finds the PostgreSQL whose pg_dump it uses (scripts/restore-drill/postgres-backup.ts). The
// drill itself runs end to end in CI (`npm run restore-drill`, .ci/run).
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { balanceDifferences, findPostgresTools, type Balances } from '../../../scripts/restore-drill/postgres-backup';

const balances = (entries: Array<[string, string, string]>): Balances =>
  new Map(entries.map(([id, cachedMinor, entriesMinor]) => [id, { cachedMinor, entriesMinor }]));

describe('scripts/restore-drill/postgres-backup', () => {
  it('finds no difference between equal ledgers, and names each account that differs or is missing', () => {
    const source = balances([
      ['acct_a', '500', '500'],
      ['acct_b', '-500', '-500'],
    ]);
    assert.deepEqual(
      balanceDifferences(source, balances([...source].map(([id, b]) => [id, b.cachedMinor, b.entriesMinor]))),
      [],
    );
    const restored = balances([
      ['acct_a', '500', '400'],
      ['acct_c', '0', '0'],
    ]);
    const differences = balanceDifferences(source, restored);
    assert.equal(differences.length, 3);
    assert.match(differences[0], /^acct_a: .*"entriesMinor":"500".* at the backup, .*"entriesMinor":"400".* restored$/);
    assert.match(differences[1], /^acct_b: .* at the backup, null restored$/);
    assert.match(differences[2], /^acct_c: null at the backup, /);
  });

  it('takes the PostgreSQL of PG_BINDIR when it holds server and client, and says what to install otherwise', () => {
    const bin = mkdtempSync(join(tmpdir(), 'pg-bin-'));
    for (const program of ['initdb', 'postgres', 'pg_restore'])
      writeFileSync(join(bin, program), '#!/bin/sh\n', { mode: 0o755 });
    writeFileSync(join(bin, 'pg_dump'), "#!/bin/sh\necho 'pg_dump (PostgreSQL) 15.18'\n", { mode: 0o755 });
    const saved = process.env.PG_BINDIR;
    try {
      process.env.PG_BINDIR = bin;
      assert.deepEqual(findPostgresTools(), { binDir: bin, version: 'pg_dump (PostgreSQL) 15.18' });
      const clientOnly = mkdtempSync(join(tmpdir(), 'pg-bin-'));
      writeFileSync(join(clientOnly, 'pg_dump'), '#!/bin/sh\n', { mode: 0o755 });
      process.env.PG_BINDIR = clientOnly;
      const found = (() => {
        try {
          return findPostgresTools().binDir;
        } catch (err) {
          return (err as Error).message;
        }
      })();
      // Another installation of the machine may still be found; never the incomplete one.
      assert.notEqual(found, clientOnly);
      if (found.startsWith('the restore drill')) assert.match(found, /apt-get install postgresql/);
    } finally {
      if (saved === undefined) delete process.env.PG_BINDIR;
      else process.env.PG_BINDIR = saved;
    }
  });
});
