// An issuer's webhook endpoint: create or replace it, read it, rotate its secret. The
// secret is returned when it is made (creation, rotation) and never again.
import { errors } from '../../core/errors';
import { classifyFailure } from '../../core/failures';
import { webhookUrlProblems } from '../../core/webhooks/endpoint-url';
import { generateSigningSecret, ROTATION_OVERLAP_MS } from '../../core/webhooks/signing';
import type { Db } from '../../prisma/client';
import type { WebhookEndpoint } from '../../prisma/generated/client';
import type { AuthenticatedIssuer } from '../middleware/auth';
import { WEBHOOK_TYPES, type WebhookTypeName } from './schemas';

export interface EndpointInput {
  url: string;
  enabledTypes?: WebhookTypeName[];
}

export function presentEndpoint(endpoint: WebhookEndpoint, signingSecret?: string) {
  return {
    url: endpoint.url,
    enabledTypes: endpoint.enabledTypes,
    ...(signingSecret ? { signingSecret } : {}),
    previousSecretExpiresAt: endpoint.previousSecretExpiresAt?.toISOString() ?? null,
    createdAt: endpoint.createdAt.toISOString(),
    updatedAt: endpoint.updatedAt.toISOString(),
  };
}

/** PUT semantics: the body replaces the configuration; the secret survives an update. */
export async function putEndpoint(
  db: Db,
  issuer: AuthenticatedIssuer,
  input: EndpointInput,
  now: Date,
): Promise<{ endpoint: WebhookEndpoint; signingSecret?: string }> {
  const problems = webhookUrlProblems(input.url, issuer.environment);
  if (problems.length > 0) throw errors.validation('invalid_webhook_url', `The webhook URL is not acceptable: ${problems[0].message}.`, problems);
  const config = { url: input.url, enabledTypes: input.enabledTypes ?? [...WEBHOOK_TYPES], updatedAt: now };
  // Two attempts at most: the second only runs when a concurrent PUT created the row first.
  for (let attempt = 0; attempt < 2; attempt++) {
    const existing = await db.webhookEndpoint.findUnique({ where: { issuerId: issuer.id } });
    if (existing) return { endpoint: await db.webhookEndpoint.update({ where: { issuerId: issuer.id }, data: config }) };
    const signingSecret = generateSigningSecret();
    try {
      const endpoint = await db.webhookEndpoint.create({ data: { issuerId: issuer.id, ...config, secret: signingSecret, createdAt: now } });
      return { endpoint, signingSecret };
    } catch (err) {
      if (classifyFailure(err) !== 'unique_violation') throw err;
    }
  }
  throw errors.concurrentChange('webhook_endpoint_conflict', 'The webhook endpoint changed concurrently; retry the request.');
}

export async function getEndpoint(db: Db, issuerId: string): Promise<WebhookEndpoint> {
  const endpoint = await db.webhookEndpoint.findUnique({ where: { issuerId } });
  if (!endpoint) throw errors.notFound('webhook_endpoint_not_found', 'No webhook endpoint is configured; PUT /api/v2/webhook-endpoint first.');
  return endpoint;
}

/**
 * A new secret signs from now on; the current one keeps signing beside it for 24 h. Only
 * two secrets sign at once: rotating again during an overlap retires the oldest at once.
 */
export async function rotateSecret(db: Db, issuerId: string, now: Date): Promise<{ signingSecret: string; previousSecretExpiresAt: Date }> {
  const endpoint = await getEndpoint(db, issuerId);
  const signingSecret = generateSigningSecret();
  const previousSecretExpiresAt = new Date(now.getTime() + ROTATION_OVERLAP_MS);
  // Conditional on the secret read above, so two concurrent rotations cannot both win.
  const { count } = await db.webhookEndpoint.updateMany({
    where: { issuerId, secret: endpoint.secret },
    data: { secret: signingSecret, previousSecret: endpoint.secret, previousSecretExpiresAt, updatedAt: now },
  });
  if (count === 0) throw errors.concurrentChange('webhook_endpoint_conflict', 'The secret was rotated concurrently; retry the request.');
  return { signingSecret, previousSecretExpiresAt };
}
