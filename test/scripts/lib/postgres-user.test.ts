import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { blockingDirectory, reachableDataDir } from '../../../scripts/lib/postgres-user';

// A user who owns nothing here: only the "others" bits let it in.
const STRANGER = { uid: 54_321, gid: 54_321 };

describe('scripts/lib/postgres-user', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'rewards-pguser-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('names the first directory on the way that the user may not enter', () => {
    mkdirSync(join(dir, 'clone', '.data'), { recursive: true });
    chmodSync(dir, 0o700);
    assert.equal(blockingDirectory(join(dir, 'clone', '.data', 'postgres'), STRANGER), dir);
    chmodSync(dir, 0o711); // search only, as `chmod o+x` gives
    assert.equal(blockingDirectory(join(dir, 'clone', '.data', 'postgres'), STRANGER), undefined);
    // The owner's bits count for the owner, even when the others' would let anyone in.
    chmodSync(dir, 0o077);
    assert.equal(blockingDirectory(dir, { uid: process.getuid!(), gid: STRANGER.gid }), dir);
    chmodSync(dir, 0o700);
  });

  it('does not move data already in a directory the user cannot reach: one line says what to do', () => {
    const data = join(dir, 'clone', '.data', 'postgres');
    mkdirSync(data, { recursive: true });
    writeFileSync(join(data, 'PG_VERSION'), '18\n');
    chmodSync(dir, 0o700);
    assert.throws(
      () => reachableDataDir(data, STRANGER, () => undefined),
      (err: Error) =>
        !err.message.includes('\n') &&
        err.message.includes(`cannot enter ${dir} (mode 0700)`) &&
        err.message.includes(`chmod o+x ${dir}`) &&
        err.message.includes('DATABASE_URL'),
    );
  });
});
