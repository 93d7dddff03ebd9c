// Webhook endpoints as the API shows them: the signing secret only when the endpoint is made.
import type { WebhookEndpoint } from '../../prisma/generated/client';

const iso = (d: Date | null) => d?.toISOString() ?? null;

export function presentEndpoint(endpoint: WebhookEndpoint, signingSecret?: string) {
  return {
    id: endpoint.id,
    url: endpoint.url,
    enabledTypes: endpoint.enabledTypes,
    description: endpoint.description,
    status: endpoint.status,
    disabledReason: endpoint.disabledReason,
    rateLimitPerSecond: endpoint.rateLimitPerSecond,
    health: {
      consecutiveFailures: endpoint.consecutiveFailures,
      failingSince: iso(endpoint.failingSince),
      lastSuccessAt: iso(endpoint.lastSuccessAt),
      lastFailureAt: iso(endpoint.lastFailureAt),
    },
    ...(signingSecret ? { signingSecret } : {}),
    previousSecretExpiresAt: iso(endpoint.previousSecretExpiresAt),
    createdAt: endpoint.createdAt.toISOString(),
    updatedAt: endpoint.updatedAt.toISOString(),
  };
}
