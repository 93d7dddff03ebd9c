// After PostgreSQL was restored from a backup, or Temporal lost its state: the restored database
// says which purchases are in flight, and Temporal may not know them
// (docs/operating/backup-and-restore.md, "After a restore: what is in flight"; decision 0041). This hands each of
// them over again, as the API does after its commit, and restarts the retries of the webhook
// deliveries that were retrying:
// - events waiting to be processed (pending, or a reversal whose preview is still open): a run
//   that exists takes the signal once (it ignores an event it has seen), a closed one is started
//   again only for a pending event (core/domain/handover.ts), a missing one is started;
// - previewed authorizations with no settlement stored: a new run waits for the settlement and
//   lapses the preview after SETTLEMENT_TIMEOUT, counted from now; a run that still waits ignores it;
// - deliveries `delivering`: the retry run is started under the id the relay gave it, so one that
//   still exists is left alone, and a new one sends only the attempts not recorded yet.
// Safe to run more than once, and while the service runs.
import type { Db } from '../../prisma/client';
import type { WorkflowEngine } from '../../core/workflow-engine';
import { handOver, signalFor } from '../../core/domain/handover';
import type { EventKind } from '../../core/domain/events';
import { startDeliveryRetries } from '../../activities/webhooks/start-delivery';
import { recordAudit } from '../../api/audit/store';
import { intFlag, UsageError, type Command } from './command';

export interface InFlightRecovery {
  /** Events signalled (a pending one or an open preview), and those Temporal refused. */
  handedOver: number;
  failed: Array<{ eventId: string; error: string }>;
  /** Retrying webhook deliveries whose retry run was started again (or found to exist). */
  deliveriesResumed: number;
}

interface InFlightEvent {
  id: string;
  issuerId: string;
  chgId: string;
  externalId: string;
  workflowId: string;
  kind: string;
  state: string;
}

/** Pages of this many rows, each handed over before the next is read. */
const PAGE = 500;

export async function recoverInFlight(
  db: Db,
  temporal: WorkflowEngine,
  options: { pageSize?: number } = {},
): Promise<InFlightRecovery> {
  const pageSize = options.pageSize ?? PAGE;
  const result: InFlightRecovery = { handedOver: 0, failed: [], deliveriesResumed: 0 };
  for (let after = ''; ;) {
    const page = await inFlightEvents(db, after, pageSize);
    if (page.length === 0) break;
    const { handedOver, failed } = await handOver(
      { temporal, db },
      page.map((e) => ({
        eventId: e.id,
        issuerId: e.issuerId,
        chgId: e.chgId,
        externalId: e.externalId,
        workflowId: e.workflowId,
        signal: signalFor(e.kind as EventKind, e.state),
      })),
    );
    result.handedOver += handedOver.length;
    result.failed.push(...failed);
    after = page[page.length - 1].id;
  }
  result.deliveriesResumed = await resumeRetryingDeliveries(db, temporal, pageSize);
  return result;
}

/** The next page of events in flight, by id. */
function inFlightEvents(db: Db, after: string, limit: number): Promise<InFlightEvent[]> {
  return db.$queryRaw<InFlightEvent[]>`
    SELECT e.id, e.issuer_id AS "issuerId", e.chg_id AS "chgId", e.external_id AS "externalId",
           e.workflow_id AS "workflowId", e.kind, e.state
      FROM ingested_event e
     WHERE e.id > ${after}
       AND (e.reward_status = 'pending'
            OR (e.kind = 'auth' AND e.state = 'reversed' AND e.reward_status IN ('previewed', 'not_matched'))
            OR (e.kind = 'auth' AND e.state <> 'reversed' AND e.reward_status = 'previewed'
                AND NOT EXISTS (SELECT 1 FROM ingested_event s
                                 WHERE s.issuer_id = e.issuer_id AND s.kind = 'settled'
                                   AND s.authorization_external_id = e.external_id)))
     ORDER BY e.id
     LIMIT ${limit}`;
}

async function resumeRetryingDeliveries(db: Db, temporal: WorkflowEngine, pageSize: number): Promise<number> {
  let resumed = 0;
  for (let cursor: { webhookId: string; endpointId: string } | undefined; ;) {
    const page = await db.webhookDelivery.findMany({
      where: { status: 'delivering', relayedAt: { not: null } },
      include: { webhook: true },
      orderBy: [{ webhookId: 'asc' }, { endpointId: 'asc' }],
      take: pageSize,
      ...(cursor ? { cursor: { webhookId_endpointId: cursor }, skip: 1 } : {}),
    });
    if (page.length === 0) return resumed;
    for (const delivery of page) {
      await startDeliveryRetries(temporal, {
        ...delivery.webhook,
        endpointId: delivery.endpointId,
        attemptNumber: delivery.relayAttemptNumber,
      });
      resumed++;
    }
    const last = page[page.length - 1];
    cursor = { webhookId: last.webhookId, endpointId: last.endpointId };
  }
}

export const recoveryCommands: Command[] = [
  {
    name: 'recover:in-flight',
    usage: 'recover:in-flight [--page-size 500]',
    summary: 'After a restore: hand every purchase in flight to Temporal again, resume retrying webhooks',
    async run(args, ctx) {
      const pageSize = intFlag(args, 'page-size') ?? PAGE;
      if (pageSize < 1 || pageSize > 5_000) throw new UsageError('--page-size must be between 1 and 5000');
      const result = await recoverInFlight(ctx.db, await ctx.temporal(), { pageSize });
      const details = {
        handedOver: result.handedOver,
        failed: result.failed.length,
        deliveriesResumed: result.deliveriesResumed,
      };
      await recordAudit(ctx.db, { actor: ctx.actor, action: 'recovery.in_flight', details }, ctx.now);
      ctx.print({ ...details, failures: result.failed.slice(0, 20) });
      // Temporal refused some: it is down or overloaded; the command is safe to run again.
      if (result.failed.length > 0)
        throw new Error(`Temporal refused ${result.failed.length} hand-over(s); run recover:in-flight again`);
    },
  },
];
