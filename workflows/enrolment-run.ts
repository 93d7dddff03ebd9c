// EnrolmentRun: one run per (offer, run row) (`enrolment/<offer id>/<run id>`, searchable in the
// Temporal UI by RewardsMerchantId and RewardsStatus), started when a targeted offer is created
// or its targeting changes, or by the worker's watch when its start comes. Steps:
//   1. Enrol the groups of every issuer that sees the merchant a chunk at a time (one activity,
//      one statement in one database transaction each), in group id order, until a chunk comes
//      back short.
//   2. Mark the run completed.
// A chunk retried after a crash finds the rows it stored (the enrolment's primary key) and stores
// only the others, so every group is enrolled once whatever fails. A chunk that fails past its
// retries marks the run failed: the groups enrolled stay enrolled, those not yet enrol when first
// evaluated, and a new run (docs/operating/runbook.md, "An enrolment run that failed") does the
// rest. The history stays bounded (workflows/chunked-run.ts): the run continues as new.
import { continueAsNew, proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { EnrolmentActivities, EnrolmentRunOutcome } from '../activities/enrolment';
import { ENROLMENT_RUN_NOT_PROCESSING } from '../core/failure-types';
import { postingOptions } from './activity-options';
import { runChunks } from './chunked-run';
import type { EnrolmentRunInput } from './enrolment-run-contract';
import { RewardsStatus } from './search-attributes';

const nonRetryable = [...(postingOptions.retry?.nonRetryableErrorTypes ?? []), ENROLMENT_RUN_NOT_PROCESSING];
const { enrolOfferChunk, completeEnrolmentRun, failEnrolmentRun } = proxyActivities<EnrolmentActivities>({
  ...postingOptions,
  retry: { ...postingOptions.retry, nonRetryableErrorTypes: nonRetryable },
});

export async function enrolmentRun(input: EnrolmentRunInput): Promise<EnrolmentRunOutcome> {
  const { runId, chunkSize } = input;
  const after = await runChunks({
    name: `enrolment run ${runId}`,
    startAfter: input.afterChgId ?? '',
    chunk: async (afterChgId) => (await enrolOfferChunk({ runId, afterChgId, chunkSize })).nextAfterChgId,
    fail: (reason) => failEnrolmentRun({ runId, reason }),
    failureType: ENROLMENT_RUN_NOT_PROCESSING,
  });
  if (after !== null) return continueAsNew<typeof enrolmentRun>({ ...input, afterChgId: after });
  const done = await completeEnrolmentRun({ runId });
  upsertSearchAttributes([{ key: RewardsStatus, value: done.status }]);
  return done;
}
