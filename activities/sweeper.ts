// The sweeper's activity: events still waiting for their hand-over after a grace period
// (so it does not race the API's own hand-over) are handed over again, page by page. Each
// page is marked before the next is read and the activity heartbeats after it, so a retry
// or the next scheduled run continues where this one stopped; it stops by itself after
// SWEEP_BUDGET_MS. An event that was already processed (its hand-over went out but was never
// marked, e.g. the API died in between) is only marked: signalling it again would start a
// second run of a purchase whose workflow has finished.
import { Context } from '@temporalio/activity';
import type { Db } from '../prisma/client';
import type { WorkflowEngine } from '../core/workflow-engine';
import { handOver, signalFor } from '../core/domain/handover';
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
  /** Processed events whose hand-over had not been recorded: marked, not signalled. */
  alreadyProcessed: number;
}

export function createSweepActivities(deps: SweepDeps) {
  return {
    async sweepHandovers(input: { olderThanMs: number; limit: number }): Promise<SweepResult> {
      const startedMs = performance.now();
      const cutoff = new Date(deps.clock.now().getTime() - input.olderThanMs);
      const result: SweepResult = { handedOver: 0, failed: 0, alreadyProcessed: 0 };
      let after: { receivedAt: Date; id: string } | undefined;
      while (
        result.handedOver + result.failed + result.alreadyProcessed < input.limit &&
        performance.now() - startedMs < SWEEP_BUDGET_MS
      ) {
        const rows = await deps.db.ingestedEvent.findMany({
          where: {
            handedOverAt: null,
            receivedAt: { lt: cutoff },
            // Keyset paging: a page whose hand-over failed is not read again in this run.
            ...(after
              ? {
                  OR: [
                    { receivedAt: { gt: after.receivedAt } },
                    { receivedAt: after.receivedAt, id: { gt: after.id } },
                  ],
                }
              : {}),
          },
          orderBy: [{ receivedAt: 'asc' }, { id: 'asc' }],
          take: Math.min(SWEEP_PAGE_SIZE, input.limit - result.handedOver - result.failed - result.alreadyProcessed),
          select: {
            id: true,
            issuerId: true,
            chgId: true,
            externalId: true,
            workflowId: true,
            kind: true,
            state: true,
            rewardStatus: true,
            receivedAt: true,
          },
        });
        if (rows.length === 0) break;
        after = rows[rows.length - 1];
        const processed = rows.filter((r) => r.rewardStatus !== 'pending').map((r) => r.id);
        if (processed.length > 0) {
          await deps.db.ingestedEvent.updateMany({
            where: { id: { in: processed } },
            data: { handedOverAt: deps.clock.now() },
          });
        }
        const waiting = rows.filter((r) => r.rewardStatus === 'pending');
        const page = await handOver(
          { temporal: deps.temporal, db: deps.db },
          waiting.map((r) => ({
            eventId: r.id,
            issuerId: r.issuerId,
            chgId: r.chgId,
            externalId: r.externalId,
            workflowId: r.workflowId,
            signal: signalFor(r.kind as EventKind, r.state),
          })),
          () => deps.clock.now(),
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
