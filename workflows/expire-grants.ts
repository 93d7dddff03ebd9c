// ExpireGrants: run by a Temporal Schedule (worker/schedules.ts, hourly, overlap SKIP).
// Steps:
//   1. Ask the activity to expire one bounded batch of grants past `expiresAt`, at the
//      workflow's clock (so time-skipping tests and replays agree on "now").
//   2. Repeat while batches come back full and made progress, at most MAX_BATCHES_PER_RUN
//      times; anything left is picked up by the next scheduled run.
// Nothing to compensate: each grant's expiry is one idempotent database transaction.
import { proxyActivities } from '@temporalio/workflow';
import type { ExpiryActivities } from '../activities/expiry';
import { postingOptions } from './activity-options';

const { expireDueGrants } = proxyActivities<ExpiryActivities>(postingOptions);

export const DEFAULT_EXPIRY_BATCH_SIZE = 200;
export const MAX_BATCHES_PER_RUN = 50;

export interface ExpireGrantsInput {
  batchSize?: number;
  maxBatches?: number;
  /** Only this issuer's grants (tests, operator re-runs); all issuers when absent. */
  issuerId?: string;
}

export interface ExpireGrantsResult {
  expired: number;
  expiredMinor: number;
  failed: number;
  batches: number;
}

export async function expireGrants(input: ExpireGrantsInput = {}): Promise<ExpireGrantsResult> {
  const batchSize = input.batchSize ?? DEFAULT_EXPIRY_BATCH_SIZE;
  const maxBatches = Math.min(input.maxBatches ?? MAX_BATCHES_PER_RUN, MAX_BATCHES_PER_RUN);
  const atMs = Date.now(); // workflow time: the same on replay, moved by the time-skipping server
  const total: ExpireGrantsResult = { expired: 0, expiredMinor: 0, failed: 0, batches: 0 };
  while (total.batches < maxBatches) {
    const batch = await expireDueGrants({ atMs, batchSize, issuerId: input.issuerId });
    total.batches += 1;
    total.expired += batch.expired;
    total.expiredMinor += batch.expiredMinor;
    total.failed += batch.failed;
    // A full batch in which every grant failed would return the same grants again.
    if (!batch.more || batch.expired === 0) break;
  }
  return total;
}
