// The contract between the TransactionLifecycle workflow and its activities. The workflow
// imports only these types (never the implementations, which do I/O).

export type StepStatus =
  | 'previewed'
  | 'matched'
  | 'not_matched'
  | 'reversed'
  | 'voided'
  | 'lapsed'
  | 'waiting_for_purchase'
  | 'unknown';

export interface StepOutcome {
  status: StepStatus;
  merchantId?: string;
  /** The webhook record written for this step, if any (delivered by WebhookDelivery). */
  webhookId?: string;
}

export interface EventRef {
  eventId: string;
}

export interface LifecycleActivities {
  previewAuthorization(input: EventRef): Promise<StepOutcome>;
  voidPreview(input: EventRef): Promise<StepOutcome>;
  lapsePreview(input: EventRef): Promise<StepOutcome>;
  settleTransaction(input: EventRef): Promise<StepOutcome>;
  clawBackRefund(input: EventRef): Promise<StepOutcome>;
  markUnknown(input: EventRef & { reason: string; workflowId: string }): Promise<void>;
}
