// PayoutRun: one run per payout (`payout/<issuer>/<po id>`, searchable in the Temporal UI by
// RewardsIssuerId and RewardsStatus), started by POST /api/v2/payouts. Steps:
//   1. Pay the issuer's groups a chunk at a time (one activity, one database transaction each),
//      in cashback account id order, until a chunk comes back short.
//   2. Mark the payout completed, with its payout_completed webhook.
// A chunk retried after a crash pays only the groups it had not paid (their payout lines), so
// every group is paid at most once whatever fails. A chunk that fails past its retries marks the
// payout failed: what was paid stays paid, and a new run pays the rest. Nothing is compensated:
// a payout is the issuer's instruction to credit cardholders, which the items file carries.
// The history stays bounded: after CHUNKS_PER_RUN chunks the run continues as new where it stopped.
import {
  ApplicationFailure,
  continueAsNew,
  isCancellation,
  proxyActivities,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { ChunkOutcome, PayoutActivities, PayoutOutcome } from '../activities/payouts';
import { PAYOUT_NOT_PROCESSING } from '../core/failure-types';
import { postingOptions } from './activity-options';
import { RewardsStatus } from './search-attributes';

export const PAYOUT_WORKFLOW_TYPE = 'payoutRun';
/** Chunks before the run continues as new: 200 activities keep its history far below Temporal's limits. */
export const CHUNKS_PER_RUN = 200;

const nonRetryable = [...(postingOptions.retry?.nonRetryableErrorTypes ?? []), PAYOUT_NOT_PROCESSING];
const { payOutChunk, completePayout, failPayout } = proxyActivities<PayoutActivities>({
  ...postingOptions,
  retry: { ...postingOptions.retry, nonRetryableErrorTypes: nonRetryable },
});

export interface PayoutRunInput {
  issuerId: string;
  payoutId: string;
  /** Where a continued run resumes ('' or absent: from the start). */
  afterAccountId?: string;
  /** Tests and the bench only: groups per chunk. */
  chunkSize?: number;
}

export function payoutWorkflowId(issuerId: string, payoutId: string): string {
  return `payout/${issuerId}/${payoutId}`;
}

export async function payoutRun(input: PayoutRunInput): Promise<PayoutOutcome> {
  let after: string | null = input.afterAccountId ?? '';
  try {
    for (let chunk = 0; after !== null && chunk < CHUNKS_PER_RUN; chunk++) {
      const outcome: ChunkOutcome = await payOutChunk({
        payoutId: input.payoutId,
        afterAccountId: after,
        chunkSize: input.chunkSize,
      });
      after = outcome.nextAfterAccountId;
    }
  } catch (err) {
    if (isCancellation(err) || !(err instanceof Error)) throw err;
    const failed = await failPayout({ payoutId: input.payoutId, reason: err.message });
    upsertSearchAttributes([{ key: RewardsStatus, value: failed.status }]);
    throw ApplicationFailure.nonRetryable(`payout ${input.payoutId} failed: ${err.message}`, PAYOUT_NOT_PROCESSING);
  }
  if (after !== null) return continueAsNew<typeof payoutRun>({ ...input, afterAccountId: after });
  const done = await completePayout({ payoutId: input.payoutId });
  upsertSearchAttributes([{ key: RewardsStatus, value: done.status }]);
  return done;
}
