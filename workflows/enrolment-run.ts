// EnrolmentRun: one run per (offer, run row) (`enrolment/<offer id>/<run id>`, searchable in the
// Temporal UI by RewardsMerchantId and RewardsStatus), started when a targeted offer is created
// or its targeting changes, or by the worker's watch when its start comes. Steps:
//   1. Cut the group ids into lanes (one activity: bounds from a sample of the groups).
//   2. Enrol the groups of every issuer that sees the merchant a chunk at a time (one activity,
//      one statement in one database transaction each), in group id order within each lane, the
//      lanes side by side, until each lane's chunk comes back short. A chunk's cost is PostgreSQL's
//      work on its rows (decision 0049), which lanes spread over the database's cores.
//   3. Mark the run completed.
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
import type { EnrolmentLane, EnrolmentRunInput } from './enrolment-run-contract';
import { RewardsStatus } from './search-attributes';

const nonRetryable = [...(postingOptions.retry?.nonRetryableErrorTypes ?? []), ENROLMENT_RUN_NOT_PROCESSING];
const { enrolOfferChunk, planEnrolmentLanes, completeEnrolmentRun, failEnrolmentRun } =
  proxyActivities<EnrolmentActivities>({
    ...postingOptions,
    retry: { ...postingOptions.retry, nonRetryableErrorTypes: nonRetryable },
  });

export async function enrolmentRun(input: EnrolmentRunInput): Promise<EnrolmentRunOutcome> {
  // A run started before lanes has neither field: it goes on one chunk after another, as it began.
  if (input.lanes === undefined && input.cursors === undefined) return oneLane(input);
  const { runId, chunkSize } = input;
  const cursors =
    input.cursors ?? lanesBetween(await planEnrolmentLanes({ runId, lanes: input.lanes ?? 1, chunkSize }));
  const left = await Promise.all(
    cursors.map(async (lane): Promise<EnrolmentLane | null> => {
      const after = await runChunks({
        name: `enrolment run ${runId}`,
        startAfter: lane.afterChgId,
        chunk: async (afterChgId) =>
          (await enrolOfferChunk({ runId, afterChgId, upToChgId: lane.upToChgId, chunkSize })).nextAfterChgId,
        fail: (reason) => failEnrolmentRun({ runId, reason }),
        failureType: ENROLMENT_RUN_NOT_PROCESSING,
      });
      return after === null ? null : { afterChgId: after, upToChgId: lane.upToChgId };
    }),
  );
  const remaining = left.filter((lane): lane is EnrolmentLane => lane !== null);
  if (remaining.length > 0) return continueAsNew<typeof enrolmentRun>({ ...input, cursors: remaining });
  return complete(runId);
}

/** The lanes the planned bounds cut the group ids into: after '' up to the first, ..., after the last to the end. */
function lanesBetween(bounds: readonly string[]): EnrolmentLane[] {
  const starts = ['', ...bounds];
  return starts.map((afterChgId, i) => ({ afterChgId, upToChgId: bounds[i] ?? null }));
}

async function oneLane(input: EnrolmentRunInput): Promise<EnrolmentRunOutcome> {
  const { runId, chunkSize } = input;
  const after = await runChunks({
    name: `enrolment run ${runId}`,
    startAfter: input.afterChgId ?? '',
    chunk: async (afterChgId) => (await enrolOfferChunk({ runId, afterChgId, chunkSize })).nextAfterChgId,
    fail: (reason) => failEnrolmentRun({ runId, reason }),
    failureType: ENROLMENT_RUN_NOT_PROCESSING,
  });
  if (after !== null) return continueAsNew<typeof enrolmentRun>({ ...input, afterChgId: after });
  return complete(runId);
}

async function complete(runId: string): Promise<EnrolmentRunOutcome> {
  const done = await completeEnrolmentRun({ runId });
  upsertSearchAttributes([{ key: RewardsStatus, value: done.status }]);
  return done;
}
