// Webhook endpoints, webhook records and their attempts as the API shows them: an endpoint's
// signing secret only when it is made.
import type { Webhook, WebhookAttempt } from '../../prisma/generated/client';

const iso = (d: Date | null) => d?.toISOString() ?? null;

export function presentWebhook(webhook: Webhook) {
  return {
    webhookId: webhook.id,
    type: webhook.type,
    status: webhook.status,
    attemptCount: webhook.attemptCount,
    lastAttemptAt: iso(webhook.lastAttemptAt),
    nextAttemptAt: iso(webhook.nextAttemptAt),
    deliveredAt: iso(webhook.deliveredAt),
    createdAt: webhook.createdAt.toISOString(),
    data: webhook.data,
  };
}

export function presentAttempt(attempt: WebhookAttempt) {
  return {
    attemptNumber: attempt.attemptNumber,
    startedAt: attempt.startedAt.toISOString(),
    statusCode: attempt.statusCode,
    latencyMs: attempt.latencyMs,
    outcome: attempt.outcome,
    errorClass: attempt.errorClass,
    error: attempt.error,
  };
}
