// An issuer's webhook endpoint (create or replace it, read it, rotate its secret) and the
// webhook records. The secret is returned when it is made (creation, rotation) and never
// again; it is stored sealed under WEBHOOK_SECRET_KEYS (core/webhooks/secret-sealing.ts).
import { errors } from '../../core/errors';
import { classifyFailure } from '../../core/failures';
import { uriSyntaxProblems, webhookUrlProblems } from '../../core/webhooks/endpoint-url';
import type { WebhookDestinations } from '../../core/webhooks/destination-guard';
import { generateSigningSecret, ROTATION_OVERLAP_MS } from '../../core/webhooks/signing';
import { openSecrets, sealSecrets } from '../../core/webhooks/secret-sealing';
import type { KeyRing } from '../../core/crypto/key-ring';
import type { Db } from '../../prisma/client';
import type { WebhookEndpoint } from '../../prisma/generated/client';
import type { AuthenticatedIssuer } from '../middleware/auth';
import type { Webhook } from '../../prisma/generated/client';
import { cursorDate, decodeCursor, toPage } from '../pagination';
import { WEBHOOK_TYPES, type EndpointInput, type WebhookListQuery } from './schemas';
import { presentAttempt, presentDelivery, presentWebhook, type WebhookSummary } from './present';
import { Prisma } from '../../prisma/generated/client';
import { sqlQuery } from '../../prisma/sql-transaction';

/** How long saving waits for the host name to resolve before judging it unresolved. */
const SAVE_RESOLVE_TIMEOUT_MS = 5_000;

/**
 * Refuses a URL that is malformed (`invalid_webhook_url`) or points where webhooks may not go
 * (`destination_not_allowed`: a loopback, private, link-local... address, in any spelling or
 * through DNS, or a port HTTP clients refuse). A host name that does not resolve is accepted:
 * nothing can be sent to it, and every attempt checks it again (docs/operating/security.md, "Webhook destinations").
 */
async function assertAcceptableUrl(
  destinations: WebhookDestinations,
  url: string,
  environment: AuthenticatedIssuer['environment'],
): Promise<void> {
  const problems = webhookUrlProblems(url, environment);
  if (problems.length > 0)
    throw errors.validation(
      'invalid_webhook_url',
      `The webhook URL is not acceptable: ${problems[0].message}.`,
      problems,
    );
  const verdict = await destinations.check(url, AbortSignal.timeout(SAVE_RESOLVE_TIMEOUT_MS));
  if (verdict.kind === 'refused') {
    const message = `Webhooks cannot be sent there: ${verdict.reason}.`;
    throw errors.validation('destination_not_allowed', message, [{ path: '/url', message: verdict.reason }]);
  }
  const syntax = uriSyntaxProblems(url);
  if (syntax.length > 0) {
    throw errors.validation('invalid_webhook_url', `The webhook URL is not acceptable: ${syntax[0].message}.`, syntax);
  }
}

/** PUT semantics: the body replaces the configuration; the secret survives an update. */
export async function putEndpoint(
  db: Db,
  deps: { webhookDestinations: WebhookDestinations; webhookSecretKeys: KeyRing },
  issuer: AuthenticatedIssuer,
  input: EndpointInput,
  now: Date,
): Promise<{ endpoint: WebhookEndpoint; signingSecret?: string }> {
  await assertAcceptableUrl(deps.webhookDestinations, input.url, issuer.environment);
  const config = { url: input.url, enabledTypes: input.enabledTypes ?? [...WEBHOOK_TYPES], updatedAt: now };
  // Two attempts at most: the second only runs when a concurrent PUT created the row first.
  for (let attempt = 0; attempt < 2; attempt++) {
    const existing = await db.webhookEndpoint.findUnique({ where: { issuerId: issuer.id } });
    if (existing)
      return { endpoint: await db.webhookEndpoint.update({ where: { issuerId: issuer.id }, data: config }) };
    const signingSecret = generateSigningSecret();
    const sealed = sealSecrets(deps.webhookSecretKeys, issuer.id, { secret: signingSecret, previousSecret: null });
    try {
      const endpoint = await db.webhookEndpoint.create({
        data: { issuerId: issuer.id, ...config, ...sealed, createdAt: now },
      });
      return { endpoint, signingSecret };
    } catch (err) {
      if (classifyFailure(err) !== 'unique_violation') throw err;
    }
  }
  throw errors.concurrentChange(
    'webhook_endpoint_conflict',
    'The webhook endpoint changed concurrently; retry the request.',
  );
}

export async function getEndpoint(db: Db, issuerId: string): Promise<WebhookEndpoint> {
  const endpoint = await db.webhookEndpoint.findUnique({ where: { issuerId } });
  if (!endpoint)
    throw errors.notFound(
      'webhook_endpoint_not_found',
      'No webhook endpoint is configured; PUT /api/v2/webhook-endpoint first.',
    );
  return endpoint;
}

/**
 * A new secret signs from now on; the current one keeps signing beside it for 24 h. Only
 * two secrets sign at once: rotating again during an overlap retires the oldest at once.
 */
export async function rotateSecret(
  db: Db,
  keys: KeyRing,
  issuerId: string,
  now: Date,
): Promise<{ signingSecret: string; previousSecretExpiresAt: Date }> {
  const endpoint = await getEndpoint(db, issuerId);
  const current = openSecrets(keys, issuerId, endpoint).secret;
  const signingSecret = generateSigningSecret();
  const previousSecretExpiresAt = new Date(now.getTime() + ROTATION_OVERLAP_MS);
  // Conditional on the sealed secret read above, so two concurrent rotations cannot both win:
  // every sealing draws a fresh IV, so equal bytes mean that nothing wrote the secrets since
  // (another rotation, or a re-encryption under a new key, which re-seals both).
  const { count } = await db.webhookEndpoint.updateMany({
    where: { issuerId, secretCiphertext: endpoint.secretCiphertext },
    data: {
      ...sealSecrets(keys, issuerId, { secret: signingSecret, previousSecret: current }),
      previousSecretExpiresAt,
      updatedAt: now,
    },
  });
  if (count === 0)
    throw errors.concurrentChange(
      'webhook_endpoint_conflict',
      'The secret was rotated concurrently; retry the request.',
    );
  return { signingSecret, previousSecretExpiresAt };
}

// Webhook records as issuers see them: a page of their webhooks, one webhook with its
// deliveries and every attempt. Another issuer's webhook is "not found", exactly like a
// missing one. A webhook's status and counts are those of its deliveries (summaryOf).

/**
 * A webhook's delivery state, from its deliveries: delivering or pending while any is; else
 * failed if any failed (or none was made: no endpoint subscribed when it was written);
 * else delivered if any was; else skipped (every endpoint was disabled or deleted).
 */
const SUMMARY = Prisma.sql`
  (SELECT CASE WHEN bool_or(d.status = 'delivering') THEN 'delivering'
               WHEN bool_or(d.status = 'pending') THEN 'pending'
               WHEN bool_or(d.status = 'failed') OR count(*) = 0 THEN 'failed'
               WHEN bool_or(d.status = 'delivered') THEN 'delivered'
               ELSE 'skipped' END
     FROM webhook_delivery d WHERE d.webhook_id = w.id) AS status,
  (SELECT count(*)::int FROM webhook_attempt a WHERE a.webhook_id = w.id) AS "attemptCount",
  (SELECT max(d.last_attempt_at) FROM webhook_delivery d WHERE d.webhook_id = w.id) AS "lastAttemptAt",
  (SELECT min(d.next_attempt_at) FROM webhook_delivery d WHERE d.webhook_id = w.id) AS "nextAttemptAt",
  (SELECT min(d.delivered_at) FROM webhook_delivery d WHERE d.webhook_id = w.id) AS "deliveredAt"`;

const WEBHOOK_COLUMNS = Prisma.sql`w.id, w.type, w.data, w.test, w.created_at AS "createdAt"`;

/** Newest first, keyed by (createdAt, id) like the list index. */
export async function listWebhooks(db: Db, issuerId: string, query: WebhookListQuery) {
  const after = decodeCursor(query.cursor, 2);
  const rows = await sqlQuery<WebhookSummary[]>(
    db,
    Prisma.sql`
    SELECT * FROM (
      SELECT ${WEBHOOK_COLUMNS}, ${SUMMARY} FROM webhook w
       WHERE w.issuer_id = ${issuerId}
         ${query.type ? Prisma.sql`AND w.type = ${query.type}` : Prisma.empty}
         ${after ? Prisma.sql`AND (w.created_at, w.id) < (${cursorDate(after[0])}, ${String(after[1])})` : Prisma.empty}
    ) s ${query.status ? Prisma.sql`WHERE s.status = ${query.status}` : Prisma.empty}
     ORDER BY s."createdAt" DESC, s.id DESC
     LIMIT ${query.limit + 1}`,
  );
  const page = toPage(rows, query.limit, (r) => [r.createdAt.toISOString(), r.id]);
  return { data: page.data.map(presentWebhook), nextCursor: page.nextCursor };
}

/** The webhook, if it exists and (when issuerId is given) belongs to that issuer. */
export async function findWebhook(db: Db, webhookId: string, issuerId?: string): Promise<Webhook> {
  const webhook = await db.webhook.findUnique({ where: { id: webhookId } });
  if (!webhook || (issuerId !== undefined && webhook.issuerId !== issuerId)) {
    throw errors.notFound('webhook_not_found', `No webhook ${webhookId}.`);
  }
  return webhook;
}

export async function webhookWithAttempts(db: Db, webhook: Webhook) {
  const [summary] = await sqlQuery<WebhookSummary[]>(
    db,
    Prisma.sql`SELECT ${WEBHOOK_COLUMNS}, ${SUMMARY} FROM webhook w WHERE w.id = ${webhook.id}`,
  );
  const [deliveries, attempts] = await Promise.all([
    db.webhookDelivery.findMany({ where: { webhookId: webhook.id }, orderBy: { createdAt: 'asc' } }),
    db.webhookAttempt.findMany({
      where: { webhookId: webhook.id },
      orderBy: [{ startedAt: 'asc' }, { attemptNumber: 'asc' }],
    }),
  ]);
  return {
    ...presentWebhook(summary),
    deliveries: deliveries.map((d) =>
      presentDelivery(
        d,
        attempts.filter((a) => a.endpointId === d.endpointId),
      ),
    ),
    attempts: attempts.map(presentAttempt),
  };
}
