// Enrolment runs (workflows/enrolment-run.ts): the row a run works on, and starting its workflow.
// A targeted offer that has started enrols the groups that exist in a run (API.md, Targeted
// offers); groups created later enrol when first evaluated (core/domain/enrolment.ts). Runs start
// from three places:
//   - the operator API, when it creates a targeted offer that has started, or PATCHes the
//     targeting (activation, audience, holdoutBps) or the start of one;
//   - the worker's watch (worker/enrolment-run-watch.ts), for a targeted offer whose start has
//     come and that has no run since (an offer created to start later, or imported);
//   - the same watch, for a processing run whose workflow was never started (an API process that
//     died between the row and the start), once the turn before saw it so.
// One run of an offer processes at a time (a partial unique index): a PATCH during a run starts
// none, because the run reads the offer afresh for every chunk. A failed run is not started
// again by the watch, so a run that keeps failing does not loop; an operator restarts it
// (docs/operating/runbook.md, "An enrolment run that failed").
import { TypedSearchAttributes, WorkflowIdReusePolicy } from '@temporalio/common';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Db } from '../../prisma/client';
import type { SqlTx } from '../../prisma/sql-transaction';
import type { WorkflowEngine } from '../workflow-engine';
import { uuidV7 } from '../ids';
import type { Audience } from '../rules/audience';
import { isTargeted, type OfferActivation } from './enrolment';
import type { ChunkOffer } from './enrolment-chunk';
import {
  ENROLMENT_RUN_WORKFLOW_TYPE,
  enrolmentRunWorkflowId,
  type EnrolmentRunInput,
} from '../../workflows/enrolment-run-contract';
import { RewardsMerchantId, RewardsStatus } from '../../workflows/search-attributes';

export type EnrolmentRunReason = 'created' | 'changed' | 'started';

export interface EnrolmentRunRow {
  id: string;
  offerId: string;
  merchantId: string;
  status: string;
}

/**
 * Chunks a run keeps going side by side: each is one PostgreSQL backend busy with its statement,
 * so more than the database has cores to spare only queue (decision 0049).
 */
export const ENROLMENT_LANES = 4;

/** Offers and runs the watch looks at per turn: a backlog of more takes a few turns. */
export const ENROLMENT_WATCH_PAGE = 100;

/** What the run reads of its offer for a chunk, and whether the offer still wants enrolling. */
export interface RunOffer extends ChunkOffer {
  /** Active in the catalogue, targeted, and started by `now`: else the run has nothing to do. */
  enrolling: boolean;
}

export async function runOfferOf(tx: SqlTx, offerId: string, now: Date): Promise<RunOffer | null> {
  const [o] = await tx.$queryRaw<
    Array<{
      id: string;
      merchantId: string;
      startsAt: Date;
      endsAt: Date | null;
      status: string;
      activation: OfferActivation;
      audience: Audience | null;
      holdoutBps: number;
      issuerIds: string[] | null;
    }>
  >`SELECT o.id, o.merchant_id AS "merchantId", o.starts_at AS "startsAt", o.ends_at AS "endsAt", o.status,
           o.activation, o.audience, o.holdout_bps AS "holdoutBps", m.issuer_ids AS "issuerIds"
      FROM offer o JOIN merchant m ON m.id = o.merchant_id WHERE o.id = ${offerId}`;
  if (!o) return null;
  const enrolling =
    o.status === 'active' && isTargeted(o) && o.startsAt <= now && (o.endsAt === null || o.endsAt > now);
  return { ...o, enrolling };
}

/**
 * Writes a processing run for the offer, unless one is processing: the new row, or null. The
 * run's times are the service's clock, not an issuer's: an offer's start is the same instant for
 * every issuer.
 */
export async function openEnrolmentRun(
  db: Pick<Db, '$queryRaw'>,
  offerId: string,
  reason: EnrolmentRunReason,
  now: Date,
): Promise<EnrolmentRunRow | null> {
  const id = `enrun_${uuidV7(now.getTime())}`;
  const [row] = await db.$queryRaw<EnrolmentRunRow[]>`
    INSERT INTO offer_enrolment_run (id, offer_id, status, reason, created_at, updated_at)
    SELECT ${id}, o.id, 'processing', ${reason}, ${now}, ${now} FROM offer o WHERE o.id = ${offerId}
    ON CONFLICT (offer_id) WHERE status = 'processing' DO NOTHING
    RETURNING id, offer_id AS "offerId", status,
              (SELECT merchant_id FROM offer WHERE id = ${offerId}) AS "merchantId"`;
  return row ?? null;
}

/** Only a run never started may be started by the watch (core/domain/run-starts.ts says why). */
const NEVER_STARTED = { workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE };

export async function startEnrolmentRunWorkflow(
  temporal: WorkflowEngine,
  run: EnrolmentRunRow,
  options: { neverStarted?: boolean } = {},
): Promise<void> {
  const chunkSize = temporal.settings.enrolmentChunkGroups;
  const input: EnrolmentRunInput = {
    offerId: run.offerId,
    runId: run.id,
    lanes: ENROLMENT_LANES,
    ...(chunkSize ? { chunkSize } : {}),
  };
  await temporal.client.workflow.start(ENROLMENT_RUN_WORKFLOW_TYPE, {
    workflowId: enrolmentRunWorkflowId(run.offerId, run.id),
    taskQueue: temporal.taskQueue,
    args: [input],
    typedSearchAttributes: new TypedSearchAttributes([
      { key: RewardsMerchantId, value: run.merchantId },
      { key: RewardsStatus, value: 'processing' },
    ]),
    ...(options.neverStarted ? NEVER_STARTED : {}),
  });
}

/**
 * Opens and starts a run for the offer when it is a targeted offer that has started and no run
 * of it is processing; the run, or null when none was due. A start that fails leaves the row
 * processing, which the watch starts a turn later.
 */
export async function beginEnrolmentRun(
  db: Db,
  temporal: WorkflowEngine,
  offerId: string,
  reason: EnrolmentRunReason,
  now: Date,
): Promise<EnrolmentRunRow | null> {
  const offer = await db.$transaction((tx) => runOfferOf(tx, offerId, now));
  if (!offer?.enrolling) return null;
  const run = await openEnrolmentRun(db, offerId, reason, now);
  if (run) await startEnrolmentRunWorkflow(temporal, run);
  return run;
}

/** What one turn of the watch started, and the processing runs it saw for the next turn. */
export interface EnrolmentWatchTurn {
  /** Runs opened for offers whose start came. */
  opened: string[];
  /** Processing runs whose workflow was never started, started now. */
  restarted: string[];
  seen: ReadonlySet<string>;
}

/**
 * Opens and starts a run for every targeted offer that has started, has not ended, and has no
 * run created since its start (a failed one included: an operator restarts those); starts the
 * processing runs that the turn before saw and that have no workflow.
 */
export async function startDueEnrolmentRuns(
  db: Db,
  temporal: WorkflowEngine,
  now: Date,
  previousSeen: ReadonlySet<string> = new Set(),
  /** Tests only: the offers of this merchant alone (a test's database holds every other test's offers). */
  merchantId: string | null = null,
): Promise<EnrolmentWatchTurn> {
  const due = await db.$queryRaw<Array<{ id: string }>>`
    SELECT o.id FROM offer o
     WHERE o.status = 'active' AND o.starts_at <= ${now} AND (o.ends_at IS NULL OR o.ends_at > ${now})
       AND (${merchantId}::text IS NULL OR o.merchant_id = ${merchantId}::text)
       AND (o.activation = 'auto' OR o.audience IS NOT NULL OR o.holdout_bps > 0)
       AND NOT EXISTS (SELECT 1 FROM offer_enrolment_run r WHERE r.offer_id = o.id AND r.created_at >= o.starts_at)
     ORDER BY o.starts_at, o.id
     LIMIT ${ENROLMENT_WATCH_PAGE}`;
  const processing = await db.$queryRaw<EnrolmentRunRow[]>`
    SELECT r.id, r.offer_id AS "offerId", r.status, o.merchant_id AS "merchantId"
      FROM offer_enrolment_run r JOIN offer o ON o.id = r.offer_id
     WHERE r.status = 'processing' AND (${merchantId}::text IS NULL OR o.merchant_id = ${merchantId}::text)
     ORDER BY r.created_at, r.id LIMIT ${ENROLMENT_WATCH_PAGE}`;
  const opened: string[] = [];
  for (const { id } of due) {
    const run = await openEnrolmentRun(db, id, 'started', now);
    if (!run) continue;
    await startEnrolmentRunWorkflow(temporal, run);
    opened.push(run.id);
  }
  const restarted: string[] = [];
  for (const run of processing.filter((r) => previousSeen.has(r.id))) {
    try {
      await startEnrolmentRunWorkflow(temporal, run, { neverStarted: true });
      restarted.push(run.id);
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }
  return { opened, restarted, seen: new Set(processing.map((r) => r.id)) };
}
