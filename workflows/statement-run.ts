// StatementRun: one run per operator request (`statements/<period>/<run id>`, searchable in the
// Temporal UI by RewardsStatus), started by POST /admin/v1/statements. Steps:
//   1. Bill every merchant receivable a chunk at a time (one activity, one database transaction
//      each), in account id order, until a chunk comes back short.
//   2. Mark the run completed.
// A chunk retried after a crash issues nothing twice (its accounts are billed for the period). A
// chunk that fails past its retries marks the run failed: what it issued stays issued, and
// another run for the period bills the rest. Nothing is compensated: an issued statement never
// changes (docs/decisions/0040-merchant-statements.md). The history stays bounded
// (workflows/chunked-run.ts): the run continues as new where it stopped.
import { continueAsNew, proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { StatementActivities, StatementRunOutcome } from '../activities/statements';
import { STATEMENT_RUN_NOT_PROCESSING } from '../core/failure-types';
import { billingOptions } from './activity-options';
import { runChunks } from './chunked-run';
import { RewardsStatus } from './search-attributes';
import type { StatementRunInput } from './statement-run-contract';

const nonRetryable = [...(billingOptions.retry?.nonRetryableErrorTypes ?? []), STATEMENT_RUN_NOT_PROCESSING];
const { billStatementChunk, completeStatementRun, failStatementRun } = proxyActivities<StatementActivities>({
  ...billingOptions,
  retry: { ...billingOptions.retry, nonRetryableErrorTypes: nonRetryable },
});

export async function statementRun(input: StatementRunInput): Promise<StatementRunOutcome> {
  const { runId, chunkSize } = input;
  const after = await runChunks({
    name: `statement run ${runId}`,
    startAfter: input.afterAccountId ?? '',
    chunk: async (afterAccountId) =>
      (await billStatementChunk({ runId, afterAccountId, chunkSize })).nextAfterAccountId,
    fail: (reason) => failStatementRun({ runId, reason }),
    failureType: STATEMENT_RUN_NOT_PROCESSING,
  });
  if (after !== null) return continueAsNew<typeof statementRun>({ ...input, afterAccountId: after });
  const done = await completeStatementRun({ runId });
  upsertSearchAttributes([{ key: RewardsStatus, value: done.status }]);
  return done;
}
