// Reprocessing: an operator re-runs the processing of a transaction that ended `unknown`
// (its activity failed for good), once the cause is fixed. The event goes back to
// `pending`, the audit log says who asked and when, and the purchase's workflow gets a
// `reprocess` signal (starting a new run if the old one finished). Activities are
// idempotent, so a step that did commit before failing returns what it posted.
import { randomUUID } from 'node:crypto';
import { errors } from '../../core/errors';
import { classifyFailure } from '../../core/failures';
import type { Db } from '../../prisma/client';
import { recordAudit } from '../audit/store';
import { signalFor } from '../../core/domain/handover';
import { LIFECYCLE_WORKFLOW_TYPE, lifecycleInput, type ReprocessSignal } from '../../workflows/lifecycle-signals';
import type { EventKind } from '../ingestion/schemas';
import type { WorkflowEngine } from '../../core/workflow-engine';

export interface ReprocessStarted {
  transactionId: string;
  status: 'pending';
  previousStatus: string;
  workflowId: string;
}

export async function reprocessTransaction(
  db: Db,
  temporal: WorkflowEngine | undefined,
  eventId: string,
  actor: string,
  now: Date,
  reason?: string,
): Promise<ReprocessStarted> {
  if (!temporal)
    throw errors.unavailable('workflow_engine_unavailable', 'The workflow engine is not configured; reprocess later.');
  const event = await db.ingestedEvent.findUnique({ where: { id: eventId } });
  if (!event) throw errors.notFound('transaction_not_found', `No transaction ${eventId}.`);
  if (event.rewardStatus !== 'unknown') {
    throw errors.conflict(
      'not_reprocessable',
      `Transaction ${eventId} is ${event.rewardStatus}; only unknown transactions are reprocessed.`,
      { status: event.rewardStatus },
    );
  }
  await db.$transaction(async (tx) => {
    // Conditional: of two operators clicking at once, one resets and one gets the 409 below.
    const reset = await tx.ingestedEvent.updateMany({
      where: { id: eventId, rewardStatus: 'unknown' },
      data: { rewardStatus: 'pending' },
    });
    if (reset.count !== 1)
      throw errors.conflict('not_reprocessable', `Transaction ${eventId} is already being reprocessed.`);
    await recordAudit(
      tx,
      {
        actor,
        action: 'transaction.reprocess',
        targetId: eventId,
        details: { issuerId: event.issuerId, previousFailure: event.failureReason, reason: reason ?? null },
      },
      now,
    );
  });
  const signal: ReprocessSignal = {
    eventId,
    step: signalFor(event.kind as EventKind, event.state),
    requestId: randomUUID(),
  };
  try {
    await temporal.client.workflow.signalWithStart(LIFECYCLE_WORKFLOW_TYPE, {
      workflowId: event.workflowId,
      taskQueue: temporal.taskQueue,
      args: [lifecycleInput(event.issuerId, temporal.settings.settlementTimeoutMs)],
      signal: 'reprocess',
      signalArgs: [signal],
    });
  } catch (err) {
    // Put it back as it was, so the operator can simply try again.
    await db.ingestedEvent.updateMany({
      where: { id: eventId, rewardStatus: 'pending', processedAt: null },
      data: { rewardStatus: 'unknown' },
    });
    if (classifyFailure(err) === 'workflow_engine_unavailable')
      throw errors.unavailable('workflow_engine_unavailable', 'The workflow engine is unreachable; reprocess later.');
    throw err;
  }
  return { transactionId: eventId, status: 'pending', previousStatus: 'unknown', workflowId: event.workflowId };
}
