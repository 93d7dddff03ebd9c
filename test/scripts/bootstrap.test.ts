// scripts/bootstrap.js installs, before each npm script, only what that script needs: the
// service's own steps always, the browser, the client generator and promtool for the tests, ESLint for
// the lint. Read from its table here, so that `npm start` cannot quietly grow a tool chain.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const { EXTRAS } = require('../../scripts/bootstrap.js') as { EXTRAS: Record<string, { name: string }[]> };
const extras = (purpose: string) => EXTRAS[purpose].map((step) => step.name).sort();

describe('scripts/bootstrap.js', () => {
  it('gives npm start nothing beyond the service, and the tests and lint their tools', () => {
    assert.deepEqual(extras('start'), []);
    assert.deepEqual(extras('test'), ['ensureChromium', 'ensureOpenApiTypescript', 'ensurePromtool']);
    assert.deepEqual(extras('lint'), ['ensureLintTools']);
    assert.deepEqual(extras('all'), ['ensureChromium', 'ensureLintTools', 'ensureOpenApiTypescript', 'ensurePromtool']);
  });

  it('is run by each npm script with the purpose of that script', () => {
    const scripts = (
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    assert.equal(scripts.prestart, 'node scripts/bootstrap.js start');
    assert.equal(scripts.pretest, 'node scripts/bootstrap.js test');
    assert.equal(scripts.prelint, 'node scripts/bootstrap.js lint');
  });

  it('refuses a purpose it does not know, before installing anything', () => {
    const run = spawnSync(process.execPath, [join(ROOT, 'scripts', 'bootstrap.js'), 'deploy'], { encoding: 'utf8' });
    assert.equal(run.status, 2);
    assert.match(run.stderr, /unknown purpose deploy; one of start, test, lint, openapi, all/);
  });
});
