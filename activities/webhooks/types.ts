// The contract between the WebhookDelivery workflow and its activities. The workflow
// imports only these types (never the implementations, which do I/O).

export interface AttemptInput {
  webhookId: string;
  /** The delivery's endpoint; absent in runs started before endpoints had ids (the first endpoint). */
  endpointId?: string;
  attemptNumber: number;
  /** The wait before the next attempt if this one fails; null when it is the last. */
  nextAttemptInMs: number | null;
  replay: boolean;
}

export type AttemptOutcome =
  | 'succeeded'
  | 'failed'
  /** No endpoint, the type is not enabled, or the destination is refused: retrying cannot help. */
  | 'undeliverable'
  /** The endpoint is disabled or deleted: nothing sent, the delivery ends `skipped`. */
  | 'skipped'
  /** A duplicate start of a delivered webhook: nothing sent. */
  | 'already_delivered'
  | 'not_found';

/**
 * Why an attempt failed, stored beside its message (webhook_attempt.error_class): what
 * sendWebhook reports, or what the attempt found before sending (no endpoint, type not
 * enabled), or a lost activity. Decisions read this, never the message.
 */
export type AttemptErrorClass =
  | 'http_status'
  | 'timeout'
  | 'connection_error'
  | 'request_error'
  | 'destination_refused'
  | 'not_configured'
  | 'type_not_enabled'
  | 'attempt_lost';

export interface AttemptResult {
  outcome: AttemptOutcome;
  statusCode?: number | null;
  error?: string | null;
}

export interface WebhookActivities {
  /** One HTTP POST, recorded; idempotent per (webhookId, endpointId, attemptNumber). */
  attemptWebhookDelivery(input: AttemptInput): Promise<AttemptResult>;
  /** Records an attempt whose activity was lost (worker stopped, time-out) as failed. */
  recordLostWebhookAttempt(input: AttemptInput & { error: string }): Promise<AttemptResult>;
}
