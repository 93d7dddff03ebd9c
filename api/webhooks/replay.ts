// Replay: a new WebhookDelivery run per delivery of a stored webhook (to one endpoint when the
// caller names it, else to each enabled endpoint it was or would now be delivered to), with the
// same webhookId and body and the configured retry schedule (WEBHOOK_RETRY_SCHEDULE, as a new
// delivery would get). Shared by the issuer API, the operator API and the admin CLI.
//
// A run's attempts continue its delivery's numbering (first = attemptCount + 1) and its
// workflow id names that number, so a double-clicked replay starts one run, not two. A webhook
// with a delivery still retrying (`delivering`) is not replayed: its run would interleave
// attempts with the replay; wait for it to finish, or let it succeed.
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { errors } from '../../core/errors';
import { classifyFailure } from '../../core/failures';
import type { WorkflowEngine } from '../../core/workflow-engine';
import type { Db } from '../../prisma/client';
import type { Webhook, WebhookDelivery } from '../../prisma/generated/client';
import { recordAudit } from '../audit/store';
import { findWebhook } from './store';
import { webhookWorkflowAttributes } from '../../core/domain/webhook-workflow-attributes';
import {
  WEBHOOK_DELIVERY_WORKFLOW_TYPE,
  webhookReplayWorkflowId,
  type WebhookDeliveryInput,
} from '../../workflows/webhook-delivery-contract';

export interface ReplayedDelivery {
  endpointId: string;
  firstAttemptNumber: number;
  workflowId: string;
}

export interface ReplayStarted extends ReplayedDelivery {
  webhookId: string;
  /** Every delivery replayed; the fields above repeat the first. */
  deliveries: ReplayedDelivery[];
}

export async function replayWebhook(
  db: Db,
  temporal: WorkflowEngine | undefined,
  webhook: Webhook,
  at: Date,
  endpointId?: string,
): Promise<ReplayStarted> {
  if (!temporal)
    throw errors.unavailable('workflow_engine_unavailable', 'The workflow engine is not configured; replay later.');
  const deliveries = await deliveriesToReplay(db, webhook, at, endpointId);
  const busy = deliveries.find((d) => d.status === 'delivering');
  if (busy) {
    throw errors.conflict(
      'webhook_delivery_in_progress',
      `Webhook ${webhook.id} is still being delivered to ${busy.endpointId}; its next attempt is scheduled.`,
      { nextAttemptAt: busy.nextAttemptAt?.toISOString() ?? null },
    );
  }
  const started: ReplayedDelivery[] = [];
  for (const delivery of deliveries) started.push(await startReplay(temporal, webhook, delivery));
  return { webhookId: webhook.id, ...started[0], deliveries: started };
}

/**
 * The deliveries a replay runs: the named endpoint's (made now if the webhook never went there),
 * or every delivery to an enabled endpoint; a webhook that had none (no endpoint subscribed
 * when it was written) gets one per enabled endpoint that subscribes now.
 */
async function deliveriesToReplay(db: Db, webhook: Webhook, at: Date, endpointId?: string): Promise<WebhookDelivery[]> {
  const endpoints = await db.webhookEndpoint.findMany({
    where: { issuerId: webhook.issuerId, ...(endpointId ? { id: endpointId } : {}) },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  if (endpointId && endpoints.length === 0)
    throw errors.notFound('webhook_endpoint_not_found', `No webhook endpoint ${endpointId}.`);
  if (endpointId && endpoints[0].status === 'disabled')
    throw errors.conflict('endpoint_disabled', `Webhook endpoint ${endpointId} is disabled; enable it first (PATCH).`);
  const existing = await db.webhookDelivery.findMany({ where: { webhookId: webhook.id } });
  const enabled = endpoints.filter((ep) => ep.status === 'enabled');
  const targets = endpointId
    ? enabled
    : existing.length > 0
      ? enabled.filter((ep) => existing.some((d) => d.endpointId === ep.id))
      : enabled.filter((ep) => ep.enabledTypes.includes(webhook.type));
  if (targets.length === 0)
    throw errors.conflict(
      'no_webhook_endpoint',
      'No enabled webhook endpoint to replay to: create or enable one (POST /api/v2/webhook-endpoints), then replay.',
    );
  return Promise.all(
    targets.map(
      (ep) =>
        existing.find((d) => d.endpointId === ep.id) ??
        // Made relayed (the replay's run carries it, not the outbox) and `failed` until that run's
        // first attempt: nothing was delivered there, and a replay that could not start is retried.
        db.webhookDelivery.upsert({
          where: { webhookId_endpointId: { webhookId: webhook.id, endpointId: ep.id } },
          create: {
            webhookId: webhook.id,
            endpointId: ep.id,
            issuerId: webhook.issuerId,
            status: 'failed',
            relayedAt: at,
            createdAt: webhook.createdAt,
            updatedAt: at,
          },
          update: {},
        }),
    ),
  );
}

async function startReplay(
  temporal: WorkflowEngine,
  webhook: Webhook,
  delivery: WebhookDelivery,
): Promise<ReplayedDelivery> {
  const firstAttemptNumber = delivery.attemptCount + 1;
  const workflowId = webhookReplayWorkflowId(webhook.id, delivery.endpointId, firstAttemptNumber);
  const input: WebhookDeliveryInput = {
    webhookId: webhook.id,
    endpointId: delivery.endpointId,
    retryScheduleMs: [...temporal.settings.webhookRetryScheduleMs],
    firstAttemptNumber,
    replay: true,
  };
  const replayed = { endpointId: delivery.endpointId, firstAttemptNumber, workflowId };
  try {
    await temporal.client.workflow.start(WEBHOOK_DELIVERY_WORKFLOW_TYPE, {
      ...webhookWorkflowAttributes(webhook),
      workflowId,
      taskQueue: temporal.taskQueue,
      args: [input],
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return replayed;
    if (classifyFailure(err) === 'workflow_engine_unavailable') {
      throw errors.unavailable('workflow_engine_unavailable', 'The workflow engine is unreachable; replay later.');
    }
    throw err;
  }
  return replayed;
}

export async function replayAsOperator(
  db: Db,
  temporal: WorkflowEngine | undefined,
  webhookId: string,
  actor: string,
  now: Date,
): Promise<ReplayStarted> {
  const webhook = await findWebhook(db, webhookId);
  const started = await replayWebhook(db, temporal, webhook, now);
  await recordAudit(
    db,
    {
      actor,
      action: 'webhook.replay',
      targetId: webhook.id,
      details: { issuerId: webhook.issuerId, workflowIds: started.deliveries.map((d) => d.workflowId) },
    },
    now,
  );
  return started;
}
