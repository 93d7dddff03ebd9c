// The sweeper's activity: events still waiting for their hand-over after a grace period
// (so it does not race the API's own hand-over) are handed over again.
import type { Client } from '@temporalio/client';
import type { Db } from '../prisma/client';
import { handOver, signalFor } from './handover';
import type { EventKind } from '../api/ingestion/schemas';

export interface SweepDeps {
  db: Db;
  clock: { now(): Date };
  temporal: { client: Client; taskQueue: string };
}

export function createSweepActivities(deps: SweepDeps) {
  return {
    async sweepHandovers(input: { olderThanMs: number; limit: number }): Promise<{ handedOver: number; failed: number }> {
      const cutoff = new Date(deps.clock.now().getTime() - input.olderThanMs);
      const rows = await deps.db.ingestedEvent.findMany({
        where: { handedOverAt: null, receivedAt: { lt: cutoff } },
        orderBy: { receivedAt: 'asc' },
        take: input.limit,
        select: { id: true, issuerId: true, chgId: true, externalId: true, workflowId: true, kind: true, state: true },
      });
      const result = await handOver(
        { client: deps.temporal.client, db: deps.db, taskQueue: deps.temporal.taskQueue },
        rows.map((r) => ({ eventId: r.id, issuerId: r.issuerId, chgId: r.chgId, externalId: r.externalId, workflowId: r.workflowId, signal: signalFor(r.kind as EventKind, r.state) })),
        () => deps.clock.now(),
      );
      return { handedOver: result.handedOver.length, failed: result.failed.length };
    },
  };
}

export type SweepActivities = ReturnType<typeof createSweepActivities>;
