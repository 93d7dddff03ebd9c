// One version for the project: CHANGELOG.md's newest release, package.json and the API
// description (/openapi.json, committed as openapi.json and built from API_VERSION) say the same,
// so a reader of any of them knows which release they describe.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_VERSION } from '../../api/app';

const ROOT = join(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** The release headings of a Keep a Changelog file, newest first: `## [1.2.3] - 2026-11-25`. */
export function releases(changelog: string): string[] {
  return [...changelog.matchAll(/^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d\d-\d\d$/gm)].map((m) => m[1]);
}

describe('the project version', () => {
  const changelog = read('CHANGELOG.md');

  it('keeps an Unreleased section above the releases, for changes not yet released', () => {
    const unreleased = changelog.indexOf('\n## [Unreleased]');
    assert.ok(unreleased >= 0, 'no "## [Unreleased]" in CHANGELOG.md');
    assert.ok(unreleased < changelog.indexOf(`\n## [${releases(changelog)[0]}]`));
  });

  it('is the same in CHANGELOG.md, package.json, package-lock.json and the API description', () => {
    const newest = releases(changelog)[0];
    const pkg = JSON.parse(read('package.json')) as { version: string };
    const lock = JSON.parse(read('package-lock.json')) as { version: string };
    const openapi = JSON.parse(read('openapi.json')) as { info: { version: string } };
    assert.deepEqual(
      { changelog: newest, packageJson: pkg.version, lock: lock.version, openapi: openapi.info.version, API_VERSION },
      { changelog: newest, packageJson: newest, lock: newest, openapi: newest, API_VERSION: newest },
    );
  });
});
