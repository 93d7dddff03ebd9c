// The name, input and result of the WebhookRetention workflow: what the worker's schedule needs to
// start a run, without importing the workflow's implementation.

export const WEBHOOK_RETENTION_WORKFLOW_TYPE = 'webhookRetention';

export interface WebhookRetentionInput {
  batchSize?: number;
  maxBatches?: number;
  /** Only this issuer's webhooks (tests, an operator's run); every issuer's when absent. */
  issuerId?: string;
}

export interface WebhookRetentionResult {
  webhooks: number;
  deliveries: number;
  attempts: number;
  batches: number;
}
