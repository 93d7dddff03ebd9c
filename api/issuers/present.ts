// Issuers and tokens as the operator API shows them: a token's secret only once, at creation.
import type { ApiToken, Issuer } from '../../prisma/generated/client';

export function presentIssuer(issuer: Issuer) {
  return {
    id: issuer.id,
    name: issuer.name,
    environment: issuer.environment,
    brandedAvailabilityDelayDays: issuer.brandedAvailabilityDelayDays,
    expiryNoticeDays: issuer.expiryNoticeDays,
    // Overrides only: null means the deployment's default (RATE_LIMIT_*_PER_SECOND).
    rateLimit: {
      requestsPerSecond: issuer.rateLimitRequestsPerSecond,
      eventsPerSecond: issuer.rateLimitEventsPerSecond,
    },
    // Null means the deployment's WEBHOOK_ENDPOINT_DISABLE_AFTER.
    webhookEndpointDisableAfter: issuer.webhookEndpointDisableAfter,
    adjustmentLimitMinor: Number(issuer.adjustmentLimitMinor),
    cashbackHoldDays: issuer.cashbackHoldDays,
    webhookRetentionDays: issuer.webhookRetentionDays,
    approvalThresholdMinor: Number(issuer.approvalThresholdMinor),
    // Null means the deployment's INGESTION_BACKLOG_LIMIT.
    ingestionBacklogLimit: issuer.ingestionBacklogLimit,
    createdAt: issuer.createdAt.toISOString(),
    updatedAt: issuer.updatedAt.toISOString(),
  };
}

export function presentToken(token: ApiToken, secret?: string) {
  return {
    id: token.id,
    ...(secret ? { token: secret } : {}),
    label: token.label,
    createdAt: token.createdAt.toISOString(),
    revokedAt: token.revokedAt ? token.revokedAt.toISOString() : null,
  };
}
