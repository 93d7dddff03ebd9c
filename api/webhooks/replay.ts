// Replay: a new WebhookDelivery run for a stored webhook, with the same webhookId and the
// same body and the configured retry schedule (WEBHOOK_RETRY_SCHEDULE, as a new delivery
// would get). Shared by the issuer API, the operator API and the admin CLI.
//
// The run's attempts continue the webhook's numbering (first = attemptCount + 1) and its
// workflow id names that number, so a double-clicked replay starts one run, not two. A
// webhook whose delivery is still retrying (`delivering`) is not replayed: its run would
// interleave attempts with the replay; wait for it to finish, or let it succeed.
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { errors } from '../../core/errors';
import { classifyFailure } from '../../core/failures';
import type { WorkflowEngine } from '../../core/workflow-engine';
import type { Db } from '../../prisma/client';
import { recordAudit } from '../audit/store';
import { findWebhook } from './store';
import type { Webhook } from '../../prisma/generated/client';
import { webhookWorkflowAttributes } from '../../core/domain/webhook-workflow-attributes';
import {
  WEBHOOK_DELIVERY_WORKFLOW_TYPE,
  webhookReplayWorkflowId,
  type WebhookDeliveryInput,
} from '../../workflows/webhook-delivery-contract';

export interface ReplayStarted {
  webhookId: string;
  firstAttemptNumber: number;
  workflowId: string;
}

export async function replayWebhook(temporal: WorkflowEngine | undefined, webhook: Webhook): Promise<ReplayStarted> {
  if (!temporal)
    throw errors.unavailable('workflow_engine_unavailable', 'The workflow engine is not configured; replay later.');
  if (webhook.status === 'delivering') {
    throw errors.conflict(
      'webhook_delivery_in_progress',
      `Webhook ${webhook.id} is still being delivered; its next attempt is scheduled.`,
      {
        nextAttemptAt: webhook.nextAttemptAt?.toISOString() ?? null,
      },
    );
  }
  const firstAttemptNumber = webhook.attemptCount + 1;
  const workflowId = webhookReplayWorkflowId(webhook.id, firstAttemptNumber);
  const input: WebhookDeliveryInput = {
    webhookId: webhook.id,
    retryScheduleMs: [...temporal.settings.webhookRetryScheduleMs],
    firstAttemptNumber,
    replay: true,
  };
  try {
    await temporal.client.workflow.start(WEBHOOK_DELIVERY_WORKFLOW_TYPE, {
      ...webhookWorkflowAttributes(webhook),
      workflowId,
      taskQueue: temporal.taskQueue,
      args: [input],
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError)
      return { webhookId: webhook.id, firstAttemptNumber, workflowId };
    if (classifyFailure(err) === 'workflow_engine_unavailable') {
      throw errors.unavailable('workflow_engine_unavailable', 'The workflow engine is unreachable; replay later.');
    }
    throw err;
  }
  return { webhookId: webhook.id, firstAttemptNumber, workflowId };
}

export async function replayAsOperator(
  db: Db,
  temporal: WorkflowEngine | undefined,
  webhookId: string,
  actor: string,
  now: Date,
): Promise<ReplayStarted> {
  const webhook = await findWebhook(db, webhookId);
  const started = await replayWebhook(temporal, webhook);
  await recordAudit(
    db,
    {
      actor,
      action: 'webhook.replay',
      targetId: webhook.id,
      details: { issuerId: webhook.issuerId, workflowId: started.workflowId },
    },
    now,
  );
  return started;
}
