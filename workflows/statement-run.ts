// StatementRun: one run per operator request (`statements/<period>/<run id>`, searchable in the
// Temporal UI by RewardsStatus), started by POST /admin/v1/statements. Steps:
//   1. Bill every merchant receivable a chunk at a time (one activity, one database transaction
//      each), in account id order, until a chunk comes back short.
//   2. Mark the run completed.
// A chunk retried after a crash issues nothing twice (its accounts are billed for the period). A
// chunk that fails past its retries marks the run failed: what it issued stays issued, and
// another run for the period bills the rest. Nothing is compensated: an issued statement never
// changes (docs/decisions/0040-merchant-statements.md). The history stays bounded: after
// CHUNKS_PER_RUN chunks the run continues as new where it stopped.
import {
  ApplicationFailure,
  continueAsNew,
  isCancellation,
  proxyActivities,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { StatementActivities, StatementChunkOutcome, StatementRunOutcome } from '../activities/statements';
import { STATEMENT_RUN_NOT_PROCESSING } from '../core/failure-types';
import { billingOptions } from './activity-options';
import { RewardsStatus } from './search-attributes';

export const STATEMENT_RUN_WORKFLOW_TYPE = 'statementRun';
/** Chunks before the run continues as new: 200 activities keep its history far below Temporal's limits. */
export const CHUNKS_PER_RUN = 200;

const nonRetryable = [...(billingOptions.retry?.nonRetryableErrorTypes ?? []), STATEMENT_RUN_NOT_PROCESSING];
const { billStatementChunk, completeStatementRun, failStatementRun } = proxyActivities<StatementActivities>({
  ...billingOptions,
  retry: { ...billingOptions.retry, nonRetryableErrorTypes: nonRetryable },
});

export interface StatementRunInput {
  runId: string;
  /** Where a continued run resumes ('' or absent: from the start). */
  afterAccountId?: string;
  /** Tests and the bench only: receivables per chunk. */
  chunkSize?: number;
}

export function statementRunWorkflowId(period: string, runId: string): string {
  return `statements/${period}/${runId}`;
}

export async function statementRun(input: StatementRunInput): Promise<StatementRunOutcome> {
  let after: string | null = input.afterAccountId ?? '';
  try {
    for (let chunk = 0; after !== null && chunk < CHUNKS_PER_RUN; chunk++) {
      const outcome: StatementChunkOutcome = await billStatementChunk({
        runId: input.runId,
        afterAccountId: after,
        chunkSize: input.chunkSize,
      });
      after = outcome.nextAfterAccountId;
    }
  } catch (err) {
    if (isCancellation(err) || !(err instanceof Error)) throw err;
    const failed = await failStatementRun({ runId: input.runId, reason: err.message });
    upsertSearchAttributes([{ key: RewardsStatus, value: failed.status }]);
    throw ApplicationFailure.nonRetryable(
      `statement run ${input.runId} failed: ${err.message}`,
      STATEMENT_RUN_NOT_PROCESSING,
    );
  }
  if (after !== null) return continueAsNew<typeof statementRun>({ ...input, afterAccountId: after });
  const done = await completeStatementRun({ runId: input.runId });
  upsertSearchAttributes([{ key: RewardsStatus, value: done.status }]);
  return done;
}
