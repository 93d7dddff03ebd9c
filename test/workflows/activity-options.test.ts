// Every retry policy is bounded (STYLE.md, habit 3), and what the documents say a failing
// posting's retries last is what the policy gives: the figure is computed here from the policy,
// so a change to it fails until the runbook and the comment beside it say the new duration.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RetryPolicy } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time';
import * as options from '../../workflows/activity-options';

const ROOT = join(__dirname, '..', '..');

/** The waits between a policy's attempts, as Temporal schedules them, in milliseconds. */
export function retryWaitsMs(retry: RetryPolicy): number[] {
  const initial = msToNumber(retry.initialInterval ?? '1 second');
  const coefficient = retry.backoffCoefficient ?? 2;
  const maximum = msToNumber(retry.maximumInterval ?? initial * 100);
  return Array.from({ length: (retry.maximumAttempts ?? Infinity) - 1 }, (_, i) =>
    Math.min(initial * coefficient ** i, maximum),
  );
}

/** "about N minutes of retries" in a text, N as written. */
const statedMinutes = (text: string): number[] =>
  [...text.replace(/\s+/g, ' ').matchAll(/about (\d+) minutes of retries/gi)].map((m) => Number(m[1]));

describe('workflows/activity-options', () => {
  it('bounds every retry policy', () => {
    for (const [name, option] of Object.entries(options)) {
      const retry = (option as { retry?: RetryPolicy }).retry;
      assert.ok(retry?.maximumAttempts, `${name} retries without a bound`);
    }
  });

  it('computes the waits of a policy as Temporal does', () => {
    assert.deepEqual(
      retryWaitsMs({
        initialInterval: '1 second',
        backoffCoefficient: 2,
        maximumInterval: '5 seconds',
        maximumAttempts: 5,
      }),
      [1000, 2000, 4000, 5000],
    );
  });

  it('says in the runbook and beside the policy how long a failing posting retries', () => {
    const minutes = Math.round(retryWaitsMs(options.postingOptions.retry!).reduce((a, b) => a + b, 0) / 60_000);
    const runbook = statedMinutes(readFileSync(join(ROOT, 'docs/operating/runbook.md'), 'utf8'));
    const comment = statedMinutes(readFileSync(join(ROOT, 'workflows/activity-options.ts'), 'utf8'));
    assert.ok(runbook.length >= 3 && comment.length >= 1, 'the runbook and the policy state the duration');
    assert.deepEqual(
      [...runbook, ...comment],
      [...runbook, ...comment].map(() => minutes),
    );
    assert.deepEqual(statedMinutes('it gets about 8 minutes of retries'), [8]);
  });
});
