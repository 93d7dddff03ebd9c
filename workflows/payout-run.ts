// PayoutRun: one run per payout (`payout/<issuer>/<po id>`, searchable in the Temporal UI by
// RewardsIssuerId and RewardsStatus), started by POST /api/v2/payouts. Steps:
//   1. Pay the issuer's groups a chunk at a time (one activity, one database transaction each),
//      in cashback account id order, until a chunk comes back short.
//   2. Mark the payout completed, with its payout_completed webhook.
// A chunk retried after a crash pays only the groups it had not paid (their payout lines), so
// every group is paid at most once whatever fails. A chunk that fails past its retries marks the
// payout failed: what was paid stays paid, and a new run pays the rest. Nothing is compensated:
// a payout is the issuer's instruction to credit cardholders, which the items file carries.
// The history stays bounded (workflows/chunked-run.ts): the run continues as new where it stopped.
import { continueAsNew, proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { PayoutActivities, PayoutOutcome } from '../activities/payouts';
import { PAYOUT_NOT_PROCESSING } from '../core/failure-types';
import { postingOptions } from './activity-options';
import { runChunks } from './chunked-run';
import type { PayoutRunInput } from './payout-run-contract';
import { RewardsStatus } from './search-attributes';

const nonRetryable = [...(postingOptions.retry?.nonRetryableErrorTypes ?? []), PAYOUT_NOT_PROCESSING];
const { payOutChunk, completePayout, failPayout } = proxyActivities<PayoutActivities>({
  ...postingOptions,
  retry: { ...postingOptions.retry, nonRetryableErrorTypes: nonRetryable },
});

export async function payoutRun(input: PayoutRunInput): Promise<PayoutOutcome> {
  const { payoutId, chunkSize } = input;
  const after = await runChunks({
    name: `payout ${payoutId}`,
    startAfter: input.afterAccountId ?? '',
    chunk: async (afterAccountId) => (await payOutChunk({ payoutId, afterAccountId, chunkSize })).nextAfterAccountId,
    fail: (reason) => failPayout({ payoutId, reason }),
    failureType: PAYOUT_NOT_PROCESSING,
  });
  if (after !== null) return continueAsNew<typeof payoutRun>({ ...input, afterAccountId: after });
  const done = await completePayout({ payoutId });
  upsertSearchAttributes([{ key: RewardsStatus, value: done.status }]);
  return done;
}
