// Webhook records as the API shows them: the webhook with the sum of its deliveries, each
// delivery with its attempts.
import type { WebhookAttempt, WebhookDelivery } from '../../prisma/generated/client';

const iso = (d: Date | null) => d?.toISOString() ?? null;

/** A webhook with the summary of its deliveries (store.ts, SUMMARY). */
export interface WebhookSummary {
  id: string;
  type: string;
  data: unknown;
  test: boolean;
  createdAt: Date;
  status: string;
  attemptCount: number;
  lastAttemptAt: Date | null;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
}

export function presentWebhook(webhook: WebhookSummary) {
  return {
    webhookId: webhook.id,
    type: webhook.type,
    status: webhook.status,
    attemptCount: webhook.attemptCount,
    lastAttemptAt: iso(webhook.lastAttemptAt),
    nextAttemptAt: iso(webhook.nextAttemptAt),
    deliveredAt: iso(webhook.deliveredAt),
    createdAt: webhook.createdAt.toISOString(),
    ...(webhook.test ? { test: true } : {}),
    data: webhook.data,
  };
}

export function presentDelivery(delivery: WebhookDelivery, attempts: WebhookAttempt[]) {
  return {
    endpointId: delivery.endpointId,
    status: delivery.status,
    attemptCount: delivery.attemptCount,
    lastAttemptAt: iso(delivery.lastAttemptAt),
    nextAttemptAt: iso(delivery.nextAttemptAt),
    deliveredAt: iso(delivery.deliveredAt),
    attempts: attempts.map(presentAttempt),
  };
}

export function presentAttempt(attempt: WebhookAttempt) {
  return {
    endpointId: attempt.endpointId,
    attemptNumber: attempt.attemptNumber,
    startedAt: attempt.startedAt.toISOString(),
    statusCode: attempt.statusCode,
    latencyMs: attempt.latencyMs,
    outcome: attempt.outcome,
    errorClass: attempt.errorClass,
    error: attempt.error,
  };
}
