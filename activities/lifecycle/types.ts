// The contract between the TransactionLifecycle workflow and its activities. The workflow
// imports only these types (never the implementations, which do I/O).

export type StepStatus =
  | 'previewed'
  | 'matched'
  | 'not_matched'
  | 'reversed'
  | 'voided'
  | 'lapsed'
  /** An authorization recorded against its purchase's settlement, which came first. */
  | 'after_settlement'
  | 'waiting_for_purchase'
  | 'unknown';

export interface StepOutcome {
  status: StepStatus;
  merchantId?: string;
  /** The webhook record written for this step, if any (delivered by WebhookDelivery). */
  webhookId?: string;
  /**
   * A previewed authorization of a sandbox issuer whose test clock runs ahead: the offset at the
   * preview, where the settlement wait starts on that clock (workflows/sandbox-clock.ts).
   */
  clockOffsetMs?: number;
}

export interface EventRef {
  eventId: string;
}

/** A step of the workflow: the event, and the workflow's clock (time-skipping tests move it). */
export interface StepInput extends EventRef {
  atMs?: number;
}

export interface LifecycleActivities {
  previewAuthorization(input: StepInput): Promise<StepOutcome>;
  voidPreview(input: StepInput): Promise<StepOutcome>;
  lapsePreview(input: StepInput): Promise<StepOutcome>;
  settleTransaction(input: StepInput): Promise<StepOutcome>;
  clawBackRefund(input: StepInput): Promise<StepOutcome>;
  markUnknown(input: EventRef & { reason: string; workflowId: string }): Promise<void>;
}
