// Empty activities for the ceiling workflows; only the delivery start does what the real
// one does (a client start of the delivery workflow, REJECT_DUPLICATE), because that call
// to the Temporal server is part of the shape being measured.
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';

export const CEILING_LIFECYCLE_TYPE = 'ceilingLifecycle';
export const CEILING_DELIVERY_TYPE = 'ceilingDelivery';

export function createCeilingActivities(deps: { client: Client; taskQueue: string }) {
  return {
    async ceilingSettle(input: { eventId: string }): Promise<{ status: string; merchantId: string; webhookId: string }> {
      return { status: 'matched', merchantId: 'mp_ceiling', webhookId: `evt_${input.eventId}` };
    },
    async ceilingStartDelivery(input: { webhookId: string }): Promise<void> {
      try {
        await deps.client.workflow.start(CEILING_DELIVERY_TYPE, {
          workflowId: `ceiling-webhook/${input.webhookId}`,
          taskQueue: deps.taskQueue,
          args: [{ webhookId: input.webhookId }],
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        });
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
    },
    async ceilingAttempt(_input: { webhookId: string }): Promise<void> {
      // Empty but for telling the bench process (IPC) that this purchase is done, the
      // counterpart of the real webhook reaching the receiver.
      process.send?.({ attempted: 1 });
    },
  };
}

export type CeilingActivities = ReturnType<typeof createCeilingActivities>;
