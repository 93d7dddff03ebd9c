// The enrolment run's effects (workflows/enrolment-run.ts). Each chunk is one database
// transaction: the run's row read, the offer read afresh
// (a PATCH of its audience applies to the groups the run reaches after it), one statement that
// enrols up to ENROLMENT_CHUNK_GROUPS groups (core/domain/enrolment-chunk.ts), and the row's
// cursor and counts. A chunk retried after its commit finds its groups enrolled and stores
// nothing twice. Completing a run, or recording that it failed, answers from the stored row when
// it finds the work done.
import { ApplicationFailure } from '@temporalio/activity';
import type { Db } from '../../prisma/client';
import { Prisma } from '../../prisma/generated/client';
import { sqlTransaction, type SqlTx } from '../../prisma/sql-transaction';
import { ENROLMENT_CHUNK_GROUPS, enrolChunk, laneBounds } from '../../core/domain/enrolment-chunk';
import { runOfferOf } from '../../core/domain/enrolment-runs';
import { ENROLMENT_RUN_NOT_PROCESSING } from '../../core/failure-types';
import type { LifecycleDeps } from '../lifecycle/deps';

export interface EnrolmentActivityDeps {
  db: Db;
  clock: { now(): Date };
  /** Fault injection for crash-safety tests (the lifecycle's hooks); never set in production. */
  faults?: LifecycleDeps['faults'];
}

export interface EnrolChunkInput {
  runId: string;
  /** The last group id of the chunk before ('' for the first). */
  afterChgId: string;
  /** The last group id of the chunk's lane (inclusive); null or absent: to the end. */
  upToChgId?: string | null;
  /** Tests and the bench only: a smaller chunk. */
  chunkSize?: number;
}

export interface EnrolChunkOutcome {
  /** Where the next chunk starts; null when this one was the last. */
  nextAfterChgId: string | null;
  groupsEnrolled: number;
}

export interface EnrolmentRunOutcome {
  runId: string;
  offerId: string;
  status: 'completed' | 'failed';
  groupsEnrolled: number;
  treated: number;
  control: number;
  outside: number;
}

interface RunRow {
  offerId: string;
  status: string;
  /** created, changed (a PATCH of its targeting) or started. */
  reason: string;
  groupsEnrolled: number;
  treated: number;
  control: number;
  outside: number;
}

async function lockRun(tx: SqlTx, runId: string, lock = true): Promise<RunRow> {
  const [run] = await tx.$queryRaw<RunRow[]>`
    SELECT offer_id AS "offerId", status, reason, groups_enrolled AS "groupsEnrolled", groups_treated AS treated,
           groups_control AS control, groups_outside AS outside
      FROM offer_enrolment_run WHERE id = ${runId} ${lock ? Prisma.sql`FOR UPDATE` : Prisma.empty}`;
  // The starter writes the row before it starts the run: a run without one has nothing to do.
  if (!run) throw ApplicationFailure.nonRetryable(`No enrolment run ${runId}`, ENROLMENT_RUN_NOT_PROCESSING);
  return run;
}

const outcomeOf = (runId: string, run: RunRow): EnrolmentRunOutcome => ({
  runId,
  offerId: run.offerId,
  status: run.status === 'failed' ? 'failed' : 'completed',
  groupsEnrolled: run.groupsEnrolled,
  treated: run.treated,
  control: run.control,
  outside: run.outside,
});

/** One chunk of a lane, in the caller's transaction (enrolOfferChunk says why the row is not locked). */
async function enrolLaneChunk(tx: SqlTx, input: EnrolChunkInput, now: Date): Promise<EnrolChunkOutcome> {
  const run = await lockRun(tx, input.runId, false);
  if (run.status !== 'processing')
    throw ApplicationFailure.nonRetryable(
      `Enrolment run ${input.runId} is ${run.status}`,
      ENROLMENT_RUN_NOT_PROCESSING,
    );
  const offer = await runOfferOf(tx, run.offerId, now);
  // Withdrawn, ended, no longer targeted or moved to start later: nothing to enrol now (the
  // watch opens a run when a later start comes).
  if (!offer?.enrolling) return { nextAfterChgId: null, groupsEnrolled: 0 };
  const limit = input.chunkSize ?? ENROLMENT_CHUNK_GROUPS;
  const range = { after: input.afterChgId, upTo: input.upToChgId ?? null, limit };
  // After a PATCH, groups enrolled treated while the offer was opt-in are told it is theirs now.
  const chunk = await enrolChunk(tx, offer, range, now, { announceEnrolled: run.reason === 'changed' });
  const enrolled = chunk.treated + chunk.control + chunk.outside;
  await tx.$executeRaw`
    UPDATE offer_enrolment_run
       SET after_chg_id = greatest(coalesce(${chunk.lastChgId}, ''), after_chg_id),
           groups_enrolled = groups_enrolled + ${enrolled}, groups_treated = groups_treated + ${chunk.treated},
           groups_control = groups_control + ${chunk.control}, groups_outside = groups_outside + ${chunk.outside},
           updated_at = ${now}
     WHERE id = ${input.runId}`;
  return {
    nextAfterChgId: chunk.groupsSeen === limit ? chunk.lastChgId : null,
    groupsEnrolled: enrolled,
  };
}

export function createEnrolmentActivities(deps: EnrolmentActivityDeps) {
  const { db, clock } = deps;
  return {
    /**
     * Enrols the next chunk of groups of a lane in the run's offer. The run's row is read, not
     * locked: the lanes' chunks run side by side, and two attempts of one chunk are kept apart by
     * the enrolment's primary key (the second waits for the first's rows, then stores none); the
     * counters add what each statement inserted, under the row's lock at the end.
     */
    async enrolOfferChunk(input: EnrolChunkInput): Promise<EnrolChunkOutcome> {
      const outcome = await sqlTransaction(db, (tx) => enrolLaneChunk(tx, input, clock.now()));
      // Test seam for crash safety: lets a test fail the activity after its commit.
      await deps.faults?.afterCommit?.('enrolOfferChunk', input.runId);
      return outcome;
    },

    /**
     * Bounds that cut the groups the run enrols into about `lanes` ranges of as many groups; none
     * when they fit in one chunk (core/domain/enrolment-chunk.ts, laneBounds).
     */
    async planEnrolmentLanes(input: { runId: string; lanes: number; chunkSize?: number }): Promise<string[]> {
      return sqlTransaction(db, async (tx) => {
        const run = await lockRun(tx, input.runId, false);
        const offer = await runOfferOf(tx, run.offerId, clock.now());
        if (!offer?.enrolling || input.lanes < 2) return [];
        return laneBounds(tx, offer.issuerIds, input.lanes, input.chunkSize ?? ENROLMENT_CHUNK_GROUPS);
      });
    },

    /** Marks the run completed. */
    async completeEnrolmentRun(input: { runId: string }): Promise<EnrolmentRunOutcome> {
      return sqlTransaction(db, async (tx) => {
        const run = await lockRun(tx, input.runId);
        if (run.status !== 'processing') return outcomeOf(input.runId, run);
        const now = clock.now();
        await tx.$executeRaw`
          UPDATE offer_enrolment_run SET status = 'completed', completed_at = ${now}, updated_at = ${now}
           WHERE id = ${input.runId}`;
        return outcomeOf(input.runId, { ...run, status: 'completed' });
      });
    },

    /**
     * Records that the run could not finish (a chunk failed past its retries): the groups it
     * enrolled stay enrolled; the others enrol when first evaluated, or by a new run.
     */
    async failEnrolmentRun(input: { runId: string; reason: string }): Promise<EnrolmentRunOutcome> {
      return sqlTransaction(db, async (tx) => {
        const run = await lockRun(tx, input.runId);
        if (run.status !== 'processing') return outcomeOf(input.runId, run);
        const now = clock.now();
        await tx.$executeRaw`
          UPDATE offer_enrolment_run
             SET status = 'failed', failure_reason = ${input.reason.slice(0, 500)}, completed_at = ${now}, updated_at = ${now}
           WHERE id = ${input.runId}`;
        return outcomeOf(input.runId, { ...run, status: 'failed' });
      });
    },
  };
}

export type EnrolmentActivities = ReturnType<typeof createEnrolmentActivities>;
