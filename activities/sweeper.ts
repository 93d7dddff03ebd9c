// The sweeper's activity: events still in the hand-over queue (handover_pending) after a
// grace period (so it does not race the API's own hand-over) are handed over again, page by
// page. Each page leaves the queue before the next is read and the activity heartbeats after
// it, so a retry or the next scheduled run continues where this one stopped; it stops by
// itself after SWEEP_BUDGET_MS. An event that was already processed (its hand-over went out
// but never left the queue, e.g. the API died in between) only leaves the queue: signalling
// it again would start a second run of a purchase whose workflow has finished.
import { Context } from '@temporalio/activity';
import type { Db } from '../prisma/client';
import type { WorkflowEngine } from '../core/workflow-engine';
import { awaitsProcessing, dequeue, handOver, signalFor } from '../core/domain/handover';
import type { EventKind } from '../core/domain/events';

export const SWEEP_PAGE_SIZE = 100;
/** Well inside the activity's 3-minute start-to-close time-out (workflows/activity-options.ts). */
export const SWEEP_BUDGET_MS = 100_000;

export interface SweepDeps {
  db: Db;
  clock: { now(): Date };
  temporal: WorkflowEngine;
}

export interface SweepResult {
  handedOver: number;
  failed: number;
  /** Processed events that were still queued: dequeued, not signalled. */
  alreadyProcessed: number;
}

interface QueuedEvent {
  id: string;
  issuerId: string;
  chgId: string;
  externalId: string;
  workflowId: string;
  kind: string;
  state: string;
  rewardStatus: string;
  queuedAt: Date;
  traceparent: string | null;
}

export function createSweepActivities(deps: SweepDeps) {
  return {
    async sweepHandovers(input: { olderThanMs: number; limit: number }): Promise<SweepResult> {
      const startedMs = performance.now();
      const cutoff = new Date(deps.clock.now().getTime() - input.olderThanMs);
      const result: SweepResult = { handedOver: 0, failed: 0, alreadyProcessed: 0 };
      const done = () => result.handedOver + result.failed + result.alreadyProcessed;
      await adoptPreviousReleaseEvents(deps.db, cutoff);
      let after: { queuedAt: Date; id: string } | undefined;
      while (done() < input.limit && performance.now() - startedMs < SWEEP_BUDGET_MS) {
        const rows = await queuedPage(deps.db, cutoff, after, Math.min(SWEEP_PAGE_SIZE, input.limit - done()));
        if (rows.length === 0) break;
        after = rows[rows.length - 1];
        const processed = rows.filter((r) => !awaitsProcessing(r)).map((r) => r.id);
        if (processed.length > 0) await dequeue(deps.db, processed);
        const waiting = rows.filter(awaitsProcessing);
        const page = await handOver(
          { temporal: deps.temporal, db: deps.db },
          waiting.map((r) => ({
            eventId: r.id,
            issuerId: r.issuerId,
            chgId: r.chgId,
            externalId: r.externalId,
            workflowId: r.workflowId,
            signal: signalFor(r.kind as EventKind, r.state),
            traceparent: r.traceparent,
          })),
        );
        result.handedOver += page.handedOver.length;
        result.failed += page.failed.length;
        result.alreadyProcessed += processed.length;
        heartbeat(result);
        // Temporal refused the whole page: it is down; the next scheduled run tries again.
        if (waiting.length > 0 && page.handedOver.length === 0) break;
      }
      return result;
    },
  };
}

/** The oldest queued events past the cutoff, after the keyset `after` (a page whose hand-over failed is not read again in this run). */
function queuedPage(
  db: Db,
  cutoff: Date,
  after: { queuedAt: Date; id: string } | undefined,
  limit: number,
): Promise<QueuedEvent[]> {
  const afterAt = after?.queuedAt ?? new Date(0);
  const afterId = after?.id ?? '';
  return db.$queryRaw<QueuedEvent[]>`
    SELECT e.id, e.issuer_id AS "issuerId", e.chg_id AS "chgId", e.external_id AS "externalId",
           e.workflow_id AS "workflowId", e.kind, e.state, e.reward_status AS "rewardStatus", p.queued_at AS "queuedAt",
           p.traceparent
      FROM handover_pending p JOIN ingested_event e ON e.id = p.event_id
     WHERE p.queued_at < ${cutoff} AND (p.queued_at, p.event_id) > (${afterAt}, ${afterId})
     ORDER BY p.queued_at, p.event_id
     LIMIT ${limit}`;
}

/**
 * Until the release after the hand-over queue: an API of the previous release, still serving
 * during a roll (docs/operating/upgrading.md, "Rolling out a release"), stores events without a queue row and marks
 * handed_over_at once Temporal has them. Those it could not hand over are queued here, from
 * the pending-hand-over index that only such events still enter.
 */
async function adoptPreviousReleaseEvents(db: Db, cutoff: Date): Promise<void> {
  await db.$executeRaw`
    WITH adopted AS (
      UPDATE ingested_event SET handed_over_at = received_at
       WHERE id IN (SELECT id FROM ingested_event WHERE handed_over_at IS NULL AND received_at < ${cutoff} LIMIT 1000)
      RETURNING id, COALESCE(state_changed_at, received_at) AS queued_at
    )
    INSERT INTO handover_pending (event_id, queued_at) SELECT id, queued_at FROM adopted
    ON CONFLICT (event_id) DO NOTHING`;
}

/** Heartbeats when running as an activity; tests also call the function directly. */
function heartbeat(details: SweepResult): void {
  let context: Context | undefined;
  try {
    context = Context.current();
  } catch {
    return;
  }
  context.heartbeat(details);
}

export type SweepActivities = ReturnType<typeof createSweepActivities>;
