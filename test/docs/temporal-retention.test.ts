// The retention of closed workflows the deploy guide has operators give the namespace
// (docs/operating/deploy.md, "Temporal") is the one the code states and registers the
// production-like cluster's namespace with (worker/namespace-retention.ts), in every command.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLOSED_WORKFLOW_RETENTION_DAYS } from '../../worker/namespace-retention';

const DEPLOY = readFileSync(join(__dirname, '..', '..', 'docs', 'operating', 'deploy.md'), 'utf8');

/** Each namespace command's retention, in days, as the guide writes it. */
export function retentionsIn(markdown: string): Array<[string, number]> {
  return [
    ...[...markdown.matchAll(/(temporal operator namespace \w+)\b.*--retention (\d+)d\b/g)].map(
      (m): [string, number] => [m[1], Number(m[2])],
    ),
    ...[...markdown.matchAll(/(tcld namespace retention set)\b.*--retention-days (\d+)\b/g)].map(
      (m): [string, number] => [m[1], Number(m[2])],
    ),
  ];
}

describe('the Temporal namespace retention in the deploy guide', () => {
  it('gives every namespace command the retention the code states', () => {
    assert.deepEqual(retentionsIn(DEPLOY), [
      ['temporal operator namespace create', CLOSED_WORKFLOW_RETENTION_DAYS],
      ['temporal operator namespace update', CLOSED_WORKFLOW_RETENTION_DAYS],
      ['tcld namespace retention set', CLOSED_WORKFLOW_RETENTION_DAYS],
    ]);
  });

  it('reads a command that says another retention (the check above can fail)', () => {
    assert.deepEqual(retentionsIn('temporal operator namespace update --namespace x --retention 3d'), [
      ['temporal operator namespace update', 3],
    ]);
  });
});
