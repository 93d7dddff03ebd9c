// The sweep of the hand-over queue (handover_pending), run by the workers' hand-over watch every
// few seconds and by the handoverSweeper schedule every minute as the net behind it. Under the
// bound on purchases in flight (core/domain/handover-admission.ts) it admits waiting events,
// issuers in turn, and hands them over page by page; and it hands over again the admitted events
// not processed `olderThanMs` after their admission (the process that admitted them may have died
// before its signals). Each page is marked before it is signalled, and the activity heartbeats
// after it, so a retry or the next run continues where this one stopped; it stops by itself after
// SWEEP_BUDGET_MS. An admitted event that was already processed only leaves the queue: signalling
// it again would start a second run of a purchase whose workflow has finished.
import { Context } from '@temporalio/activity';
import type { Db } from '../prisma/client';
import type { WorkflowEngine } from '../core/workflow-engine';
import { awaitsProcessing, dequeue, handOver, signalFor } from '../core/domain/handover';
import { admitWaiting, releaseStranded, resignalStale, type AdmittedEvent } from '../core/domain/handover-admission';
import type { EventKind } from '../core/domain/events';
import { DEFAULT_HANDOVER_MAX_IN_FLIGHT } from '../core/config';

export const SWEEP_PAGE_SIZE = 100;
/** Well inside the activity's 3-minute start-to-close time-out (workflows/activity-options.ts). */
export const SWEEP_BUDGET_MS = 100_000;

export interface SweepDeps {
  db: Db;
  clock: { now(): Date };
  temporal: WorkflowEngine;
  /** HANDOVER_MAX_IN_FLIGHT; the configuration's default when not given. */
  handoverMaxInFlight?: number;
}

export interface SweepResult {
  handedOver: number;
  failed: number;
  /** Processed events that were still queued: dequeued, not signalled. */
  alreadyProcessed: number;
}

/** The sweep, and its admission part alone (which the hand-over watch runs between whole sweeps). */
export function createHandoverSweep(deps: SweepDeps) {
  const maxInFlight = deps.handoverMaxInFlight ?? DEFAULT_HANDOVER_MAX_IN_FLIGHT;
  /** Admits waiting events while there is room and hands them over, page by page. */
  const handOverWaiting = async (input: { limit: number }, result = emptyResult()): Promise<SweepResult> => {
    const startedMs = performance.now();
    const done = () => result.handedOver + result.failed + result.alreadyProcessed;
    while (done() < input.limit && performance.now() - startedMs < SWEEP_BUDGET_MS) {
      const page = await admitWaiting(deps.db, {
        maxInFlight,
        now: deps.clock.now(),
        limit: Math.min(SWEEP_PAGE_SIZE, input.limit - done()),
      });
      if (page.length === 0) break;
      const before = result.handedOver;
      await handOverPage(deps, page, result);
      heartbeat(result);
      // Temporal refused the whole page: it is down; the next turn tries again.
      if (result.handedOver === before && page.some(awaitsProcessing)) break;
    }
    return result;
  };
  return {
    /**
     * The whole sweep: events of the previous release's APIs adopted, the places of processed
     * events whose release was lost given back, admitted events never processed handed over
     * again, then waiting events admitted while there is room.
     */
    async sweepHandovers(input: { olderThanMs: number; limit: number }): Promise<SweepResult> {
      const result = emptyResult();
      const graceEnded = new Date(deps.clock.now().getTime() - input.olderThanMs);
      await adoptPreviousReleaseEvents(deps.db, graceEnded);
      await releaseStranded(deps.db, graceEnded);
      const stale = await resignalStale(deps.db, {
        baseMs: input.olderThanMs,
        now: deps.clock.now(),
        limit: Math.min(SWEEP_PAGE_SIZE * 10, input.limit),
      });
      if (stale.length > 0) await handOverPage(deps, stale, result);
      return handOverWaiting({ limit: input.limit }, result);
    },
    /** Only the admission of waiting events: what the hand-over watch does between whole sweeps. */
    handOverWaiting: (input: { limit: number }) => handOverWaiting(input),
  };
}

const emptyResult = (): SweepResult => ({ handedOver: 0, failed: 0, alreadyProcessed: 0 });

/** The handoverSweeper schedule's activity. */
export function createSweepActivities(deps: SweepDeps) {
  return { sweepHandovers: createHandoverSweep(deps).sweepHandovers };
}

async function handOverPage(deps: SweepDeps, rows: AdmittedEvent[], result: SweepResult): Promise<void> {
  const processed = rows.filter((r) => !awaitsProcessing(r)).map((r) => r.id);
  if (processed.length > 0) await dequeue(deps.db, processed);
  const page = await handOver(
    { temporal: deps.temporal, db: deps.db },
    rows.filter(awaitsProcessing).map((r) => ({
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
}

/**
 * Until the release after the hand-over queue: an API of the previous release, still serving
 * during a roll (docs/operating/upgrading.md, "Rolling out a release"), stores events without a queue row and marks
 * handed_over_at once Temporal has them. Those it could not hand over are queued here, from
 * the pending-hand-over index that only such events still enter. Rows an API of the release
 * before admission queued have no issuer: it is filled in, so that they can be admitted.
 */
async function adoptPreviousReleaseEvents(db: Db, cutoff: Date): Promise<void> {
  await db.$executeRaw`
    WITH adopted AS (
      UPDATE ingested_event SET handed_over_at = received_at
       WHERE id IN (SELECT id FROM ingested_event WHERE handed_over_at IS NULL AND received_at < ${cutoff} LIMIT 1000)
      RETURNING id, issuer_id, COALESCE(state_changed_at, received_at) AS queued_at
    )
    INSERT INTO handover_pending (event_id, queued_at, issuer_id) SELECT id, queued_at, issuer_id FROM adopted
    ON CONFLICT (event_id) DO NOTHING`;
  await db.$executeRaw`
    UPDATE handover_pending p SET issuer_id = e.issuer_id FROM ingested_event e
     WHERE p.event_id IN (SELECT event_id FROM handover_pending WHERE issuer_id IS NULL AND admitted_at IS NULL LIMIT 1000)
       AND e.id = p.event_id`;
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
