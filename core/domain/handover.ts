// Hands admitted events to Temporal (core/domain/handover-admission.ts decides which, and when):
// one signalWithStart per event, starting the purchase's TransactionLifecycle workflow if it is
// not running. An event's queue row stays, admitted, until its step has processed it; one whose
// signal Temporal refused waits again. Signals are idempotent for a running workflow (it ignores
// an event id it has seen). A closed workflow is started again only for an event still waiting
// to be processed (a refund after the purchase finished, a settlement after its authorization
// lapsed): an event its closed run already processed was handed over before, and its repeated
// hand-over (the process that admitted it died before it knew) must not start a second run of a
// finished purchase.
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { TypedSearchAttributes, WorkflowIdReusePolicy } from '@temporalio/common';
import { mapLimited } from '../concurrency';
import { withTraceparent } from '../tracing';
import { handovers } from '../metrics';
import type { WorkflowEngine } from '../workflow-engine';
import type { Db } from '../../prisma/client';
import { hotQuery, type HotStatement } from '../../prisma/hot';
import type { EventKind, IngestedEvent } from './events';
import { readmitRefused } from './handover-admission';
import { LIFECYCLE_WORKFLOW_TYPE, lifecycleInput, type LifecycleSignalName } from '../../workflows/lifecycle-signals';
import { RewardsChgId, RewardsIssuerId, RewardsStatus, RewardsTransactionId } from '../../workflows/search-attributes';

export interface HandoverItem {
  eventId: string;
  issuerId: string;
  chgId: string;
  externalId: string;
  workflowId: string;
  signal: LifecycleSignalName;
  /** The trace of the request that stored the event, when it was traced (core/tracing.ts). */
  traceparent?: string | null;
}

/** DESIGN.md: one workflow per purchase, keyed by the authorization's id when known. */
export function lifecycleWorkflowId(issuerId: string, kind: EventKind, event: IngestedEvent): string {
  const purchaseKey =
    kind === 'settled' && 'authorizationId' in event && event.authorizationId ? event.authorizationId : event.id;
  return `txn/${issuerId}/${purchaseKey}`;
}

export function signalFor(kind: EventKind, state: string): LifecycleSignalName {
  if (kind === 'auth') return state === 'reversed' ? 'reversal' : 'authorization';
  return state === 'refunded' ? 'refund' : 'settlement';
}

/** Search attributes and memo a purchase's run starts with, so operators find it at once. */
export function startAttributes(item: Pick<HandoverItem, 'issuerId' | 'chgId' | 'eventId' | 'externalId'>) {
  return {
    typedSearchAttributes: new TypedSearchAttributes([
      { key: RewardsIssuerId, value: item.issuerId },
      { key: RewardsChgId, value: item.chgId },
      { key: RewardsTransactionId, value: [item.eventId] },
      { key: RewardsStatus, value: 'pending' },
    ]),
    memo: { issuerId: item.issuerId, chgId: item.chgId, externalId: item.externalId },
  };
}

/** signalWithStarts in flight per call: a few round trips at once keep up with any worker. */
export const HANDOVER_CONCURRENCY = 8;

/**
 * Signals every item (bounded concurrency); the events Temporal refused wait to be admitted again
 * (one statement). Those it took stay admitted until processed.
 */
export async function handOver(
  deps: { temporal: WorkflowEngine; db: Db },
  items: HandoverItem[],
): Promise<{ handedOver: string[]; failed: Array<{ eventId: string; error: string }> }> {
  const handedOver: string[] = [];
  const failed: Array<{ eventId: string; error: string }> = [];
  await mapLimited(items, HANDOVER_CONCURRENCY, async (item) => {
    try {
      // Inside the storing request's trace: the workflow's spans join it (core/tracing.ts).
      await withTraceparent(item.traceparent, () => signalEvent(deps, item));
      handedOver.push(item.eventId);
    } catch (err) {
      failed.push({ eventId: item.eventId, error: err instanceof Error ? err.message : String(err) });
    }
  });
  handovers.inc(handedOver.length);
  if (failed.length > 0)
    await readmitRefused(
      deps.db,
      failed.map((f) => f.eventId),
    );
  return { handedOver, failed };
}

// On our pool, prepared once per connection (prisma/hot.ts).
const DEQUEUE: HotStatement = {
  name: 'handover_dequeue_v1',
  text: 'DELETE FROM handover_pending WHERE event_id = ANY($1::text[])',
};

/** Takes events out of the hand-over queue: Temporal has them, or they need nothing more. */
export async function dequeue(db: Db, eventIds: string[]): Promise<void> {
  await hotQuery(db, DEQUEUE, [eventIds]);
}

/**
 * Whether a stored event still waits for its workflow to process it: a new event, or the
 * reversal of an authorization whose preview has not been closed yet. The sweeper hands these
 * over again; anything else was processed, and its queue row is only removed.
 */
export function awaitsProcessing(event: { kind: string; state: string; rewardStatus: string }): boolean {
  if (event.rewardStatus === 'pending') return true;
  return (
    event.kind === 'auth' && event.state === 'reversed' && ['previewed', 'not_matched'].includes(event.rewardStatus)
  );
}

/** Signals the purchase's running workflow, or starts one (see the header for a closed one). */
async function signalEvent(deps: { temporal: WorkflowEngine; db: Db }, item: HandoverItem): Promise<void> {
  const { client, taskQueue, settings } = deps.temporal;
  const start = (workflowIdReusePolicy: WorkflowIdReusePolicy) =>
    client.workflow.signalWithStart(LIFECYCLE_WORKFLOW_TYPE, {
      workflowId: item.workflowId,
      taskQueue,
      args: [lifecycleInput(item.issuerId, settings.settlementTimeoutMs)],
      signal: item.signal,
      signalArgs: [{ eventId: item.eventId }],
      workflowIdReusePolicy,
      ...startAttributes(item),
    });
  try {
    await start(WorkflowIdReusePolicy.REJECT_DUPLICATE);
    return;
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
  // The workflow has closed. A run closes only after every event it took was processed (its
  // status left 'pending'), so a pending event is one it never saw: it needs a new run.
  const event = await deps.db.ingestedEvent.findUnique({ where: { id: item.eventId }, select: { rewardStatus: true } });
  if (event?.rewardStatus === 'pending') await start(WorkflowIdReusePolicy.ALLOW_DUPLICATE);
}
