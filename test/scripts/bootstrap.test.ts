// scripts/bootstrap.js installs, before each npm script, only what that script needs: the
// service's own steps always, the browser, the client generator and promtool for the tests, ESLint for
// the lint, an installed PostgreSQL for the restore drill. Read from its table here, so that `npm
// start` cannot quietly grow a tool chain.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const { EXTRAS, promtoolVersion, promtoolAccepted } = require('../../scripts/bootstrap.js') as {
  EXTRAS: Record<string, { name: string }[]>;
  promtoolVersion(binary: string): string | undefined;
  promtoolAccepted(version: string | undefined): boolean;
};
const extras = (purpose: string) => EXTRAS[purpose].map((step) => step.name).sort();

describe('scripts/bootstrap.js', () => {
  it('gives npm start nothing beyond the service, and the tests and lint their tools', () => {
    assert.deepEqual(extras('start'), []);
    assert.deepEqual(extras('test'), ['ensureChromium', 'ensureOpenApiTypescript', 'ensurePromtool']);
    assert.deepEqual(extras('lint'), ['ensureLintTools']);
    assert.deepEqual(extras('restore-drill'), ['ensurePostgresTools']);
    assert.deepEqual(extras('all'), [
      'ensureChromium',
      'ensureLintTools',
      'ensureOpenApiTypescript',
      'ensurePostgresTools',
      'ensurePromtool',
    ]);
  });

  it('is run by each npm script with the purpose of that script', () => {
    const scripts = (
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    assert.equal(scripts.prestart, 'node scripts/bootstrap.js start');
    assert.equal(scripts.pretest, 'node scripts/bootstrap.js test');
    assert.equal(scripts.prelint, 'node scripts/bootstrap.js lint');
    assert.equal(scripts['prerestore-drill'], 'node scripts/bootstrap.js restore-drill');
  });

  it('refuses a purpose it does not know, before installing anything', () => {
    const run = spawnSync(process.execPath, [join(ROOT, 'scripts', 'bootstrap.js'), 'deploy'], { encoding: 'utf8' });
    assert.equal(run.status, 2);
    assert.match(run.stderr, /unknown purpose deploy; one of start, test, lint, openapi, restore-drill, all/);
  });

  describe('promtool for the alert rules (any source, the version checked)', () => {
    /** An executable that prints what a promtool of that build prints for --version. */
    function fakePromtool(firstLine: string): string {
      const file = join(mkdtempSync(join(tmpdir(), 'promtool-')), 'promtool');
      writeFileSync(file, `#!/bin/sh\necho '${firstLine}'\necho '  go version:       go1.19.8'\n`, { mode: 0o755 });
      return file;
    }

    it("reads the version of Debian's build, of a Go build with its version linked in, and of none", () => {
      assert.equal(
        promtoolVersion(
          fakePromtool('promtool, version 2.42.0+ds (branch: debian/sid, revision: 2.42.0+ds-5+deb12u1)'),
        ),
        '2.42.0',
      );
      assert.equal(promtoolVersion(fakePromtool('promtool, version 3.16.0 (branch: , revision: unknown)')), '3.16.0');
      // What `go install` builds unless told the version.
      assert.equal(promtoolVersion(fakePromtool('promtool, version  (branch: , revision: unknown)')), undefined);
      assert.equal(promtoolVersion(join(tmpdir(), 'no-such-promtool')), undefined);
    });

    it('accepts 2.42.0 (Debian 12) up to any 3.x, nothing older, nothing from 4 on', () => {
      const accepted = ['2.42.0', '2.53.4', '3.0.0', '3.16.0', '3.99.1'];
      const refused = ['2.41.9', '2.9.0', '1.8.2', '4.0.0', '', undefined];
      assert.deepEqual(
        accepted.filter((v) => !promtoolAccepted(v)),
        [],
      );
      assert.deepEqual(
        refused.filter((v) => promtoolAccepted(v)),
        [],
      );
    });
  });
});
