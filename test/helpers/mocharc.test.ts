// The suite's own mocha settings refuse a stray `.only` and pending tests, which would
// otherwise shrink a run to a small "N passed, 0 failed" that CI accepts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const settings = JSON.parse(readFileSync(join(ROOT, '.mocharc.json'), 'utf8')) as Record<string, unknown>;

function runFixture(...flags: string[]) {
  return spawnSync(
    process.execPath,
    [
      join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js'),
      '--no-config',
      ...flags,
      join(__dirname, 'fixtures', 'stray-only.fixture.js'),
    ],
    {
      encoding: 'utf8',
    },
  );
}

describe('.mocharc.json', () => {
  it('forbids .only and pending tests', () => {
    assert.equal(settings['forbid-only'], true);
    assert.equal(settings['forbid-pending'], true);
  });

  it('fails a run that holds a .only or a skipped test with those settings, and passes it without them', () => {
    const refused = runFixture('--forbid-only', '--forbid-pending');
    assert.notEqual(refused.status, 0, refused.stdout);
    assert.match(refused.stdout + refused.stderr, /\.only forbidden|forbidden/i);
    const lax = runFixture();
    assert.equal(lax.status, 0, 'the fixture itself passes when nothing forbids it');
  });
});
