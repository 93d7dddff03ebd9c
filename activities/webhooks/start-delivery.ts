// Starts the WebhookDelivery workflow (webhook/<evt id>/<whe id>) that carries a delivery's
// retries after the relay's attempt failed. A client start rather than a child workflow: the
// delivery lives on its own (a 3-day schedule outlasts the purchase), and the time-skipping
// test server, which stops skipping time while an abandoned child exists, can run it.
// Idempotent: a delivery already started, running or closed, is left alone.
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import type { Webhook } from '../../prisma/generated/client';
import type { WorkflowEngine } from '../../core/workflow-engine';
import { webhookWorkflowAttributes } from '../../core/domain/webhook-workflow-attributes';
import {
  WEBHOOK_DELIVERY_WORKFLOW_TYPE,
  webhookDeliveryWorkflowId,
  type WebhookDeliveryInput,
} from '../../workflows/webhook-delivery-contract';

export async function startDeliveryRetries(
  temporal: WorkflowEngine,
  webhook: Pick<Webhook, 'id' | 'issuerId' | 'sourceEventId' | 'data' | 'type'> & {
    endpointId: string;
    /** The relay's attempt, which failed: the run continues after it. */
    attemptNumber: number;
  },
): Promise<void> {
  // The schedule goes into the run's input: later changes of the setting leave it alone.
  const retryScheduleMs = [...temporal.settings.webhookRetryScheduleMs];
  try {
    await temporal.client.workflow.start(WEBHOOK_DELIVERY_WORKFLOW_TYPE, {
      ...webhookWorkflowAttributes(webhook),
      workflowId: webhookDeliveryWorkflowId(webhook.id, webhook.endpointId, webhook.attemptNumber),
      taskQueue: temporal.taskQueue,
      args: [
        {
          webhookId: webhook.id,
          endpointId: webhook.endpointId,
          retryScheduleMs,
          resumeAfterAttempt: 1,
          firstAttemptNumber: webhook.attemptNumber + 1,
        } satisfies WebhookDeliveryInput,
      ],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/**
 * The activity lifecycle runs of the v1 shape (workflows/lifecycle-steps-v1.ts) call after a
 * step that wrote a webhook. The outbox relay delivers every webhook now, so there is nothing
 * left to do; the activity stays registered so that those runs replay and finish.
 */
export function createDeliveryStarter() {
  return {
    async startWebhookDelivery(_input: { webhookId: string }): Promise<void> {},
  };
}

export type DeliveryStarter = ReturnType<typeof createDeliveryStarter>;
