// The names and input of the WebhookDelivery workflow. The lifecycle (a parent workflow),
// the API's replay and the admin CLI import these, so ids and defaults live in one place.

export const WEBHOOK_DELIVERY_WORKFLOW_TYPE = 'webhookDelivery';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * Waits between attempts (API.md, Webhooks): 10 retries after the first attempt, 11
 * attempts over about 3 days. Each wait is a durable Temporal timer. The default of
 * WEBHOOK_RETRY_SCHEDULE (core/config.ts), which every starter puts in the run's input.
 */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS: readonly number[] = [
  30 * SECOND,
  2 * MINUTE,
  10 * MINUTE,
  30 * MINUTE,
  1 * HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  24 * HOUR,
  24 * HOUR,
];

/** Bounds on a configured schedule: a typo must not schedule a year of retries. */
export const MAX_WEBHOOK_RETRIES = 50;
export const MAX_WEBHOOK_RETRY_WAIT_MS = 7 * 24 * HOUR;

export interface WebhookDeliveryInput {
  webhookId: string;
  /** The endpoint delivered to; absent only in runs started before endpoints had ids (the issuer's first). */
  endpointId?: string;
  /** Waits between attempts; absent only in runs started before it was configurable (default schedule). */
  retryScheduleMs?: number[];
  /** Number of this run's first attempt; a replay continues after the recorded attempts. */
  firstAttemptNumber?: number;
  /**
   * Attempts of this schedule already made, the last of them failed: the worker's relay
   * makes attempt 1 itself and starts this workflow with 1 only when it fails. The run waits
   * the schedule's next entry, then continues with attempt `resumeAfterAttempt + 1`.
   */
  resumeAfterAttempt?: number;
  /** A replay delivers again even when the webhook was already delivered. */
  replay?: boolean;
}

export interface WebhookDeliveryResult {
  webhookId: string;
  /** skipped: the endpoint was disabled or deleted; nothing more was sent. */
  status: 'delivered' | 'failed' | 'skipped' | 'already_delivered' | 'not_found';
  /** Attempts this run made. */
  attempts: number;
}

/**
 * The retries of a delivery after the relay's attempt `relayedAttempt` failed: the first
 * (attempt 1) as webhook/<evt>/<whe>; after a recover, one run per recovered attempt.
 */
export function webhookDeliveryWorkflowId(webhookId: string, endpointId: string, relayedAttempt = 1): string {
  const base = `webhook/${webhookId}/${endpointId}`;
  return relayedAttempt === 1 ? base : `${base}/recovered/${relayedAttempt}`;
}

/** One id per replay point: a double-clicked replay starts one run, a later replay another. */
export function webhookReplayWorkflowId(webhookId: string, endpointId: string, firstAttemptNumber: number): string {
  return `webhook/${webhookId}/${endpointId}/replay/${firstAttemptNumber}`;
}
