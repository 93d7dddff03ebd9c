// ExpireGrants: run by a Temporal Schedule (worker/schedules.ts, hourly, overlap SKIP), and
// for one sandbox issuer after each advance of its clock (api/sandbox/clock.ts).
// Steps, each at the workflow's clock (so time-skipping tests and replays agree on "now"):
//   1. Send the reward notices now due (reward_available, reward_expiring), one bounded
//      batch per activity, while batches come back full.
//   2. Expire one bounded batch of grants past `expiresAt` (reward_expired with each).
//   3. Repeat 2 while batches come back full and made progress, at most MAX_BATCHES_PER_RUN
//      times; anything left is picked up by the next scheduled run.
// Notices go first: a grant that expires in this run has no notice left to send, and one
// that does not is told of its expiry before the next run could expire it.
// Nothing to compensate: each batch is one idempotent database transaction.
import { patched, proxyActivities } from '@temporalio/workflow';
import type { ExpiryActivities } from '../activities/expiry';
import type { NoticeActivities } from '../activities/notices';
import { postingOptions } from './activity-options';
import { runBatches } from './batches';
import type { ExpireGrantsInput, ExpireGrantsResult } from './expire-grants-contract';

const { expireDueGrants, sendDueRewardNotices } = proxyActivities<ExpiryActivities & NoticeActivities>(postingOptions);

/** Runs started before the notices existed replay without them. */
export const REWARD_NOTICES_PATCH = 'reward-notices';

export const DEFAULT_EXPIRY_BATCH_SIZE = 200;
export const MAX_BATCHES_PER_RUN = 50;

export async function expireGrants(input: ExpireGrantsInput = {}): Promise<ExpireGrantsResult> {
  const batchSize = input.batchSize ?? DEFAULT_EXPIRY_BATCH_SIZE;
  const maxBatches = Math.min(input.maxBatches ?? MAX_BATCHES_PER_RUN, MAX_BATCHES_PER_RUN);
  const atMs = Date.now(); // workflow time: the same on replay, moved by the time-skipping server
  const total: ExpireGrantsResult = { expired: 0, expiredMinor: 0, failed: 0, batches: 0 };
  if (patched(REWARD_NOTICES_PATCH))
    Object.assign(total, await sendNotices(atMs, batchSize, maxBatches, input.issuerId));
  total.batches = await runBatches(
    maxBatches,
    () => expireDueGrants({ atMs, batchSize, issuerId: input.issuerId }),
    (batch) => {
      total.expired += batch.expired;
      total.expiredMinor += batch.expiredMinor;
      total.failed += batch.failed;
      return batch.expired;
    },
  );
  return total;
}

async function sendNotices(atMs: number, batchSize: number, maxBatches: number, issuerId: string | undefined) {
  const sent = { noticeGrants: 0, noticesRecorded: 0 };
  for (let batch = 0; batch < maxBatches; batch++) {
    const result = await sendDueRewardNotices({ atMs, batchSize, issuerId });
    sent.noticeGrants += result.grants;
    sent.noticesRecorded += result.recorded;
    if (!result.more) break;
  }
  return sent;
}
