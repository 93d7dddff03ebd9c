// The payout run's effects (workflows/payout-run.ts). Each chunk is one database transaction
// that pays up to PAYOUT_CHUNK_SIZE groups (core/domain/payouts.ts); a chunk retried after a crash
// (before or after its commit) finds the groups it paid by their lines and pays only the others,
// so every group is paid at most once per run whatever fails. Completing a run, or recording
// that it failed, answers from the stored payout when it finds the work done.
import { ApplicationFailure } from '@temporalio/activity';
import type { Db } from '../../prisma/client';
import { sqlTransaction, type SqlTx } from '../../prisma/sql-transaction';
import { nextChunk, payGroups, PAYOUT_CHUNK_SIZE } from '../../core/domain/payouts';
import { recordFactWebhooks } from '../../core/domain/webhook-records';
import { factKey } from '../../core/webhooks/fact-webhooks';
import { fromDbMinor } from '../../core/ledger';
import { PAYOUT_NOT_PROCESSING } from '../../core/failure-types';
import { issuerClockAt } from '../issuer-clock';
import type { LifecycleDeps } from '../lifecycle/deps';

export interface PayoutActivityDeps {
  db: Db;
  clock: { now(): Date };
  /** Fault injection for crash-safety tests (the lifecycle's hooks); never set in production. */
  faults?: LifecycleDeps['faults'];
}

export interface ChunkInput {
  payoutId: string;
  /** The last cashback account id of the chunk before ('' for the first). */
  afterAccountId: string;
  /** Tests and the bench only: a smaller chunk. */
  chunkSize?: number;
}

export interface ChunkOutcome {
  /** Where the next chunk starts; null when this one was the last. */
  nextAfterAccountId: string | null;
  groupsPaid: number;
  paidMinor: number;
}

export interface PayoutOutcome {
  payoutId: string;
  status: 'completed' | 'failed';
  groupCount: number;
  totalMinor: number;
}

interface RunRow {
  issuerId: string;
  status: string;
  minimumMinor: bigint;
  chgIds: string[] | null;
  asOf: Date;
  groupCount: number;
  totalMinor: bigint;
}

async function lockRun(tx: SqlTx, payoutId: string): Promise<RunRow> {
  const [run] = await tx.$queryRaw<RunRow[]>`
    SELECT issuer_id AS "issuerId", status, minimum_minor AS "minimumMinor", chg_ids AS "chgIds", as_of AS "asOf",
           group_count AS "groupCount", total_minor AS "totalMinor"
      FROM payout WHERE id = ${payoutId} AND kind = 'run' FOR UPDATE`;
  // The API writes the payout before it starts the run; a start whose commit failed leaves a run
  // without a payout, which ends here rather than retrying for nothing.
  if (!run) throw ApplicationFailure.nonRetryable(`No payout run ${payoutId}`, PAYOUT_NOT_PROCESSING);
  return run;
}

const outcomeOf = (payoutId: string, run: RunRow): PayoutOutcome => ({
  payoutId,
  status: run.status === 'failed' ? 'failed' : 'completed',
  groupCount: run.groupCount,
  totalMinor: fromDbMinor(run.totalMinor),
});

export function createPayoutActivities(deps: PayoutActivityDeps) {
  const { db, clock } = deps;
  return {
    /** Pays the next chunk of the run's groups; the run's row lock keeps two attempts of one run apart. */
    async payOutChunk(input: ChunkInput): Promise<ChunkOutcome> {
      const outcome = await sqlTransaction(db, async (tx): Promise<ChunkOutcome> => {
        const run = await lockRun(tx, input.payoutId);
        if (run.status !== 'processing')
          throw ApplicationFailure.nonRetryable(`Payout ${input.payoutId} is ${run.status}`, PAYOUT_NOT_PROCESSING);
        const limit = input.chunkSize ?? PAYOUT_CHUNK_SIZE;
        // An empty list is a run over every group (the API stores no list as []).
        const chgIds = run.chgIds && run.chgIds.length > 0 ? run.chgIds : null;
        const spec = { issuerId: run.issuerId, minimumMinor: fromDbMinor(run.minimumMinor), chgIds };
        const accountIds = await nextChunk(tx, spec, input.afterAccountId, limit);
        const paid = await payGroups(tx, {
          issuerId: run.issuerId,
          payoutId: input.payoutId,
          asOf: run.asOf,
          at: await issuerClockAt(tx, run.issuerId, clock.now()),
          minimumMinor: spec.minimumMinor,
          accountIds,
        });
        return {
          nextAfterAccountId: accountIds.length === limit ? accountIds[accountIds.length - 1] : null,
          groupsPaid: paid.length,
          paidMinor: paid.reduce((sum, p) => sum + p.amountMinor, 0),
        };
      });
      // Test seam for crash safety: lets a test fail the activity after its commit.
      await deps.faults?.afterCommit?.('payOutChunk', input.payoutId);
      return outcome;
    },

    /** Marks the run completed, with its payout_completed webhook, once. */
    async completePayout(input: { payoutId: string }): Promise<PayoutOutcome> {
      return sqlTransaction(db, async (tx) => {
        const run = await lockRun(tx, input.payoutId);
        if (run.status !== 'processing') return outcomeOf(input.payoutId, run);
        const at = await issuerClockAt(tx, run.issuerId, clock.now());
        await tx.$executeRaw`
          UPDATE payout SET status = 'completed', completed_at = ${at}, updated_at = ${at} WHERE id = ${input.payoutId}`;
        await recordFactWebhooks(tx, [
          {
            issuerId: run.issuerId,
            type: 'payout_completed',
            factKey: factKey.payoutCompleted(input.payoutId),
            sourceId: input.payoutId,
            at,
            data: {
              payoutId: input.payoutId,
              groupCount: run.groupCount,
              currency: 'usd',
              totalMinor: fromDbMinor(run.totalMinor),
            },
          },
        ]);
        return outcomeOf(input.payoutId, { ...run, status: 'completed' });
      });
    },

    /**
     * Records that the run could not finish (a chunk failed past its retries): the groups it paid
     * stay paid, with their lines; the issuer may start another run, which pays the rest.
     */
    async failPayout(input: { payoutId: string; reason: string }): Promise<PayoutOutcome> {
      return sqlTransaction(db, async (tx) => {
        const run = await lockRun(tx, input.payoutId);
        if (run.status !== 'processing') return outcomeOf(input.payoutId, run);
        const at = await issuerClockAt(tx, run.issuerId, clock.now());
        await tx.$executeRaw`
          UPDATE payout SET status = 'failed', failure_reason = ${input.reason.slice(0, 500)}, completed_at = ${at}, updated_at = ${at}
           WHERE id = ${input.payoutId}`;
        return outcomeOf(input.payoutId, { ...run, status: 'failed' });
      });
    },
  };
}

export type PayoutActivities = ReturnType<typeof createPayoutActivities>;
