// An issuer's webhook endpoints: up to MAX_ENDPOINTS_PER_ISSUER of them, each with its own URL,
// types, secret, status and health. The singular /api/v2/webhook-endpoint routes address the
// first one (the oldest by created_at, id). A secret is returned when it is made (creation,
// rotation) and never again; it is stored sealed under WEBHOOK_SECRET_KEYS
// (core/webhooks/secret-sealing.ts). Another issuer's endpoint is "not found", exactly like a
// missing one.
import { errors } from '../../core/errors';
import { newId } from '../../core/ids';
import { uriSyntaxProblems, webhookUrlProblems } from '../../core/webhooks/endpoint-url';
import type { WebhookDestinations } from '../../core/webhooks/destination-guard';
import { generateSigningSecret, ROTATION_OVERLAP_MS } from '../../core/webhooks/signing';
import { openSecrets, sealSecrets } from '../../core/webhooks/secret-sealing';
import { WEBHOOK_TYPES, type WebhookType } from '../../core/webhooks/payloads';
import { recordTestWebhook, reopenDeliveries } from '../../core/domain/webhook-deliveries';
import type { KeyRing } from '../../core/crypto/key-ring';
import type { Db } from '../../prisma/client';
import type { Prisma, WebhookEndpoint } from '../../prisma/generated/client';
import type { AuthenticatedIssuer } from '../middleware/auth';
import { createdAtKey, createdAtKeyset, toPage } from '../pagination';
import { exampleData } from '../openapi-webhooks';
import { presentEndpoint } from './present';
import {
  MAX_ENDPOINTS_PER_ISSUER,
  type EndpointChanges,
  type EndpointCreate,
  type EndpointInput,
  type EndpointListQuery,
  type RecoverInput,
} from './schemas';

/** How long saving waits for the host name to resolve before judging it unresolved. */
const SAVE_RESOLVE_TIMEOUT_MS = 5_000;

interface EndpointDeps {
  webhookDestinations: WebhookDestinations;
  webhookSecretKeys: KeyRing;
}

/** The oldest first, as the list shows them and as the singular routes pick the first. */
const OLDEST_FIRST: Prisma.WebhookEndpointOrderByWithRelationInput[] = [{ createdAt: 'asc' }, { id: 'asc' }];

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

/**
 * Serialises the writes that create an issuer's endpoints: whoever holds the issuer row counts
 * and inserts alone, so concurrent creations cannot pass the limit together, nor two singular
 * PUTs both create the first endpoint.
 */
async function lockIssuer(tx: Prisma.TransactionClient, issuerId: string): Promise<void> {
  await tx.$queryRaw`SELECT id FROM issuer WHERE id = ${issuerId} FOR UPDATE`;
}

/** A new endpoint, under the issuer's lock (lockIssuer): refused beyond the limit. */
async function insertEndpoint(
  tx: Prisma.TransactionClient,
  keys: KeyRing,
  issuerId: string,
  fields: { url: string; enabledTypes: string[]; description?: string; rateLimitPerSecond?: number | null },
  now: Date,
): Promise<{ endpoint: WebhookEndpoint; signingSecret: string }> {
  const count = await tx.webhookEndpoint.count({ where: { issuerId } });
  if (count >= MAX_ENDPOINTS_PER_ISSUER)
    throw errors.conflict(
      'endpoint_limit_reached',
      `An issuer has at most ${MAX_ENDPOINTS_PER_ISSUER} webhook endpoints; delete one first.`,
      { limit: MAX_ENDPOINTS_PER_ISSUER },
    );
  const signingSecret = generateSigningSecret();
  const sealed = sealSecrets(keys, issuerId, { secret: signingSecret, previousSecret: null });
  const endpoint = await tx.webhookEndpoint.create({
    data: { id: newId('whe'), issuerId, ...fields, ...sealed, createdAt: now, updatedAt: now },
  });
  return { endpoint, signingSecret };
}

/** The issuer's first endpoint (the oldest), which the singular routes address. */
function firstEndpoint(db: Db | Prisma.TransactionClient, issuerId: string): Promise<WebhookEndpoint | null> {
  return db.webhookEndpoint.findFirst({ where: { issuerId }, orderBy: OLDEST_FIRST });
}

/** Singular PUT: creates the first endpoint, or replaces the first one's url and types; the secret survives an update. */
export async function putEndpoint(
  db: Db,
  deps: EndpointDeps,
  issuer: AuthenticatedIssuer,
  input: EndpointInput,
  now: Date,
): Promise<{ endpoint: WebhookEndpoint; signingSecret?: string }> {
  await assertAcceptableUrl(deps.webhookDestinations, input.url, issuer.environment);
  const config = { url: input.url, enabledTypes: input.enabledTypes ?? [...WEBHOOK_TYPES] };
  return db.$transaction(async (tx) => {
    await lockIssuer(tx, issuer.id);
    const first = await firstEndpoint(tx, issuer.id);
    if (first)
      return {
        endpoint: await tx.webhookEndpoint.update({ where: { id: first.id }, data: { ...config, updatedAt: now } }),
      };
    return insertEndpoint(tx, deps.webhookSecretKeys, issuer.id, config, now);
  });
}

/** Singular GET: the first endpoint. */
export async function getEndpoint(db: Db, issuerId: string): Promise<WebhookEndpoint> {
  const endpoint = await firstEndpoint(db, issuerId);
  if (!endpoint)
    throw errors.notFound(
      'webhook_endpoint_not_found',
      'No webhook endpoint is configured; PUT /api/v2/webhook-endpoint first.',
    );
  return endpoint;
}

/** Singular rotation: the first endpoint's secret. */
export async function rotateSecret(
  db: Db,
  keys: KeyRing,
  issuerId: string,
  now: Date,
): Promise<{ signingSecret: string; previousSecretExpiresAt: Date }> {
  return rotateEndpointSecret(db, keys, await getEndpoint(db, issuerId), now);
}

/**
 * A new secret signs from now on; the current one keeps signing beside it for 24 h. Only
 * two secrets sign at once: rotating again during an overlap retires the oldest at once.
 */
export async function rotateEndpointSecret(
  db: Db,
  keys: KeyRing,
  endpoint: WebhookEndpoint,
  now: Date,
): Promise<{ signingSecret: string; previousSecretExpiresAt: Date }> {
  const { issuerId } = endpoint;
  const current = openSecrets(keys, issuerId, endpoint).secret;
  const signingSecret = generateSigningSecret();
  const previousSecretExpiresAt = new Date(now.getTime() + ROTATION_OVERLAP_MS);
  // Conditional on the sealed secret read above, so two concurrent rotations cannot both win:
  // every sealing draws a fresh IV, so equal bytes mean that nothing wrote the secrets since
  // (another rotation, or a re-encryption under a new key, which re-seals both).
  const { count } = await db.webhookEndpoint.updateMany({
    where: { id: endpoint.id, secretCiphertext: endpoint.secretCiphertext },
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

/** POST /api/v2/webhook-endpoints: one more endpoint, within the limit. */
export async function createEndpoint(
  db: Db,
  deps: EndpointDeps,
  issuer: AuthenticatedIssuer,
  input: EndpointCreate,
  now: Date,
): Promise<{ endpoint: WebhookEndpoint; signingSecret: string }> {
  await assertAcceptableUrl(deps.webhookDestinations, input.url, issuer.environment);
  const fields = {
    url: input.url,
    enabledTypes: input.enabledTypes ?? [...WEBHOOK_TYPES],
    description: input.description ?? '',
    rateLimitPerSecond: input.rateLimitPerSecond ?? null,
  };
  return db.$transaction(async (tx) => {
    await lockIssuer(tx, issuer.id);
    return insertEndpoint(tx, deps.webhookSecretKeys, issuer.id, fields, now);
  });
}

/** Oldest first, keyed by (createdAt, id) like the issuer's index. */
export async function listEndpoints(db: Db, issuerId: string, query: EndpointListQuery) {
  const keyset = createdAtKeyset(query.cursor, 'asc');
  const rows = await db.webhookEndpoint.findMany({
    where: { issuerId, ...keyset.where },
    orderBy: keyset.orderBy,
    take: query.limit + 1,
  });
  const page = toPage(rows, query.limit, createdAtKey);
  return { data: page.data.map((e) => presentEndpoint(e)), nextCursor: page.nextCursor };
}

const notFound = (endpointId: string) =>
  errors.notFound('webhook_endpoint_not_found', `No webhook endpoint ${endpointId}.`);

/** The endpoint, if it exists and belongs to the issuer. */
export async function findEndpoint(
  db: Db | Prisma.TransactionClient,
  issuerId: string,
  endpointId: string,
): Promise<WebhookEndpoint> {
  const endpoint = await db.webhookEndpoint.findFirst({ where: { id: endpointId, issuerId } });
  if (!endpoint) throw notFound(endpointId);
  return endpoint;
}

/**
 * The columns a status change writes. Disabling is the issuer's (`manual`); enabling clears the
 * reason and starts the health afresh, so the failures that disabled it count no more. Asking
 * for the status the endpoint already has changes nothing (a `failing` endpoint stays `failing`).
 */
function statusColumns(current: WebhookEndpoint, status: EndpointChanges['status'], now: Date) {
  if (status === undefined || status === current.status) return {};
  if (status === 'disabled') return { status, disabledReason: 'manual', disabledAt: now };
  return { status, disabledReason: null, disabledAt: null, consecutiveFailures: 0, failingSince: null };
}

/** PATCH: fields left out keep their value; the row is locked so the health columns change under no one. */
export async function updateEndpoint(
  db: Db,
  deps: EndpointDeps,
  issuer: AuthenticatedIssuer,
  endpointId: string,
  changes: EndpointChanges,
  now: Date,
): Promise<WebhookEndpoint> {
  await findEndpoint(db, issuer.id, endpointId);
  if (changes.url !== undefined) await assertAcceptableUrl(deps.webhookDestinations, changes.url, issuer.environment);
  const { status, ...fields } = changes;
  return db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM webhook_endpoint WHERE id = ${endpointId} AND issuer_id = ${issuer.id} FOR UPDATE`;
    const current = await findEndpoint(tx, issuer.id, endpointId);
    return tx.webhookEndpoint.update({
      where: { id: endpointId },
      data: { ...fields, ...statusColumns(current, status, now), updatedAt: now },
    });
  });
}

/** Removes the endpoint; its deliveries and attempts stay as history. */
export async function deleteEndpoint(db: Db, issuerId: string, endpointId: string): Promise<void> {
  const { count } = await db.webhookEndpoint.deleteMany({ where: { id: endpointId, issuerId } });
  if (count === 0) throw notFound(endpointId);
}

function assertEnabled(endpoint: WebhookEndpoint): void {
  if (endpoint.status !== 'enabled')
    throw errors.conflict(
      'endpoint_disabled',
      `The webhook endpoint ${endpoint.id} is disabled (${endpoint.disabledReason}); PATCH its status to enabled first.`,
    );
}

/**
 * The type's published example, as a test webhook to this endpoint only, whatever its
 * enabledTypes (an issuer may try a type before subscribing to it). Returns its webhookId.
 */
export async function sendTestEvent(
  db: Db,
  issuerId: string,
  endpointId: string,
  type: WebhookType,
  now: Date,
): Promise<string> {
  const endpoint = await findEndpoint(db, issuerId, endpointId);
  assertEnabled(endpoint);
  return recordTestWebhook(db, { issuerId, endpointId, type, data: exampleData(type), at: now });
}

/** The window [since, until) of a recovery: not empty, and not starting in the future. */
function recoveryWindow(input: RecoverInput, now: Date): { since: Date; until: Date } {
  const since = new Date(input.since);
  const until = input.until === undefined ? now : new Date(input.until);
  if (since.getTime() > now.getTime())
    throw errors.validation('invalid_window', 'since is in the future.', [
      { path: '/since', message: 'must not be in the future' },
    ]);
  if (since.getTime() >= until.getTime())
    throw errors.validation('invalid_window', 'since must be before until.', [
      { path: '/until', message: 'must be after since' },
    ]);
  return { since, until };
}

/** Sends again the endpoint's failed or skipped deliveries of the webhooks created in the window; returns how many. */
export async function recoverDeliveries(
  db: Db,
  issuerId: string,
  endpointId: string,
  input: RecoverInput,
  now: Date,
): Promise<number> {
  const window = recoveryWindow(input, now);
  assertEnabled(await findEndpoint(db, issuerId, endpointId));
  return reopenDeliveries(db, { issuerId, endpointId, ...window, at: now });
}
