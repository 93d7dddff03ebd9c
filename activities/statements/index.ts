// A statement run's effects (workflows/statement-run.ts). Each chunk is one database transaction
// that bills up to STATEMENT_CHUNK_ACCOUNTS merchant receivables (core/domain/statements.ts); a
// chunk retried after a crash, before or after its commit, finds the accounts it billed and issues
// nothing twice. Completing a run, or recording that it failed, answers from the stored run when
// it finds the work done.
import { ApplicationFailure } from '@temporalio/activity';
import type { Db } from '../../prisma/client';
import { sqlTransaction, type SqlTx } from '../../prisma/sql-transaction';
import { billChunk, STATEMENT_CHUNK_ACCOUNTS } from '../../core/domain/statements';
import { fromDbMinor } from '../../core/ledger';
import { STATEMENT_RUN_NOT_PROCESSING } from '../../core/failure-types';
import type { LifecycleDeps } from '../lifecycle/deps';

export interface StatementActivityDeps {
  db: Db;
  clock: { now(): Date };
  /** Fault injection for crash-safety tests (the lifecycle's hooks); never set in production. */
  faults?: LifecycleDeps['faults'];
}

export interface StatementChunkInput {
  runId: string;
  /** The last receivable account id of the chunk before ('' for the first). */
  afterAccountId: string;
  /** Tests and the bench only: a smaller chunk. */
  chunkSize?: number;
}

export interface StatementChunkOutcome {
  nextAfterAccountId: string | null;
  statementsIssued: number;
}

export interface StatementRunOutcome {
  runId: string;
  status: 'completed' | 'failed';
  statementCount: number;
  totalDueMinor: number;
}

interface RunRow {
  period: string;
  status: string;
  statementCount: number;
  totalDueMinor: bigint;
}

async function lockRun(tx: SqlTx, runId: string): Promise<RunRow> {
  const [run] = await tx.$queryRaw<RunRow[]>`
    SELECT period, status, statement_count AS "statementCount", total_due_minor AS "totalDueMinor"
      FROM statement_run WHERE id = ${runId} FOR UPDATE`;
  // The API writes the run before it starts the workflow; a start whose commit failed leaves a
  // workflow without a run, which ends here rather than retrying for nothing.
  if (!run) throw ApplicationFailure.nonRetryable(`No statement run ${runId}`, STATEMENT_RUN_NOT_PROCESSING);
  return run;
}

const outcomeOf = (runId: string, run: RunRow): StatementRunOutcome => ({
  runId,
  status: run.status === 'failed' ? 'failed' : 'completed',
  statementCount: run.statementCount,
  totalDueMinor: fromDbMinor(run.totalDueMinor),
});

export function createStatementActivities(deps: StatementActivityDeps) {
  const { db, clock } = deps;
  return {
    /** Bills the next chunk of receivables for the run's period. */
    async billStatementChunk(input: StatementChunkInput): Promise<StatementChunkOutcome> {
      const outcome = await sqlTransaction(db, async (tx): Promise<StatementChunkOutcome> => {
        const run = await lockRun(tx, input.runId);
        if (run.status !== 'processing')
          throw ApplicationFailure.nonRetryable(
            `Statement run ${input.runId} is ${run.status}`,
            STATEMENT_RUN_NOT_PROCESSING,
          );
        const chunk = await billChunk(tx, {
          runId: input.runId,
          period: run.period,
          afterAccountId: input.afterAccountId,
          limit: input.chunkSize ?? STATEMENT_CHUNK_ACCOUNTS,
          at: clock.now(),
        });
        return { nextAfterAccountId: chunk.nextAfterAccountId, statementsIssued: chunk.statements.length };
      });
      // Test seam for crash safety: lets a test fail the activity after its commit.
      await deps.faults?.afterCommit?.('billStatementChunk', input.runId);
      return outcome;
    },

    /** Marks the run completed, once. */
    async completeStatementRun(input: { runId: string }): Promise<StatementRunOutcome> {
      return sqlTransaction(db, async (tx) => {
        const run = await lockRun(tx, input.runId);
        if (run.status !== 'processing') return outcomeOf(input.runId, run);
        const at = clock.now();
        await tx.$executeRaw`
          UPDATE statement_run SET status = 'completed', completed_at = ${at}, updated_at = ${at} WHERE id = ${input.runId}`;
        return outcomeOf(input.runId, { ...run, status: 'completed' });
      });
    },

    /**
     * Records that the run could not finish (a chunk failed past its retries): the statements it
     * issued stay issued; another run bills the rest of the period.
     */
    async failStatementRun(input: { runId: string; reason: string }): Promise<StatementRunOutcome> {
      return sqlTransaction(db, async (tx) => {
        const run = await lockRun(tx, input.runId);
        if (run.status !== 'processing') return outcomeOf(input.runId, run);
        const at = clock.now();
        await tx.$executeRaw`
          UPDATE statement_run SET status = 'failed', failure_reason = ${input.reason.slice(0, 500)}, completed_at = ${at}, updated_at = ${at}
           WHERE id = ${input.runId}`;
        return outcomeOf(input.runId, { ...run, status: 'failed' });
      });
    },
  };
}

export type StatementActivities = ReturnType<typeof createStatementActivities>;
