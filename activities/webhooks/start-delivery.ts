// Starts the WebhookDelivery workflow of a recorded webhook. The lifecycle calls this as an
// activity rather than starting a child workflow: the delivery then lives on its own (a
// purchase workflow may finish long before a 3-day retry schedule does), and the
// time-skipping test server, which stops skipping time while an abandoned child exists,
// can run the whole path. Idempotent: a delivery already started is left alone.
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import type { Db } from '../../prisma/client';
import { webhookWorkflowAttributes } from './workflow-attributes';
import { WEBHOOK_DELIVERY_WORKFLOW_TYPE, webhookDeliveryWorkflowId, type WebhookDeliveryInput } from '../../workflows/webhook-delivery-contract';

export function createDeliveryStarter(deps: { db: Db; temporal: { client: Client; taskQueue: string } }) {
  return {
    async startWebhookDelivery(input: { webhookId: string }): Promise<void> {
      const webhook = await deps.db.webhook.findUniqueOrThrow({ where: { id: input.webhookId } });
      try {
        await deps.temporal.client.workflow.start(WEBHOOK_DELIVERY_WORKFLOW_TYPE, {
          ...webhookWorkflowAttributes(webhook),
          workflowId: webhookDeliveryWorkflowId(input.webhookId),
          taskQueue: deps.temporal.taskQueue,
          args: [{ webhookId: input.webhookId } satisfies WebhookDeliveryInput],
          // A re-run of the purchase returns the same stored webhook: its delivery, running
          // or closed, is not started again (replays are separate runs with their own ids).
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        });
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
    },
  };
}

export type DeliveryStarter = ReturnType<typeof createDeliveryStarter>;
