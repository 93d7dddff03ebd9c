// One webhook delivery attempt: one signed HTTP POST, recorded with the webhook's new status
// in one statement. Idempotent per (webhookId, attemptNumber): an attempt already recorded
// is returned as it was, never sent or recorded again. Used by the WebhookDelivery workflow's
// activities (index.ts) and by the worker's relay for every webhook's first attempt (worker/webhook-relay.ts).
import { Prisma } from '../../prisma/generated/client';
import type { Db } from '../../prisma/client';
import { sqlQuery } from '../../prisma/sql-transaction';
import type { Logger } from '../../core/logger';
import { buildEnvelope } from '../../core/webhooks/envelope';
import { signatureHeaders } from '../../core/webhooks/signing';
import { openSecrets } from '../../core/webhooks/secret-sealing';
import type { KeyRing } from '../../core/crypto/key-ring';
import type { WebhookDestinations } from '../../core/webhooks/destination-guard';
import { sendWebhook } from './send';
import { webhookAttempts } from '../../core/metrics';
import type { AttemptErrorClass, AttemptInput, AttemptResult } from './types';
import { loadAttemptState, type AttemptRecord, type AttemptState, type RecordedAttempt } from './attempt-state';

export interface WebhookDeps {
  db: Db;
  logger: Logger;
  clock: { now(): Date };
  /** Where webhooks may go (core/webhooks/destination-guard.ts), checked before every attempt. */
  webhookDestinations: WebhookDestinations;
  /** WEBHOOK_SECRET_KEYS: opens the endpoint's sealed signing secrets at each attempt. */
  webhookSecretKeys: KeyRing;
  /** Tests only: a shorter HTTP time-out than the contract's 10 s. */
  webhookAttemptTimeoutMs?: number;
}

/**
 * Error classes of attempts that never reached HTTP because nothing can be delivered. A refused
 * destination is one: the issuer must change the URL, and waiting three days of
 * retries for that helps nobody; after the fix, a replay delivers.
 */
const UNDELIVERABLE_CLASSES: ReadonlySet<AttemptErrorClass> = new Set<AttemptErrorClass>([
  'not_configured',
  'type_not_enabled',
  'destination_refused',
]);

/**
 * Sends the attempt described by `state` (not recorded yet) and records it. `relayed` marks
 * the outbox row done in the same statement when the outcome needs no delivery workflow.
 */
export async function attemptAndRecord(
  deps: WebhookDeps,
  state: AttemptState,
  input: AttemptInput,
  relayed = false,
): Promise<AttemptResult> {
  const startedAt = deps.clock.now();
  const { webhook, endpoint } = state;
  const reason = undeliverableReason(endpoint, webhook.type);
  if (reason)
    return recordAttempt(
      deps.db,
      input,
      { startedAt, statusCode: null, latencyMs: 0, outcome: 'failed', ...reason },
      relayed,
    );
  if (!endpoint) throw new Error('unreachable: a missing endpoint is an undeliverable reason');
  // Secrets and URL are read at every attempt, so a rotation or a new URL applies to retries.
  // Opening them is one AES-GCM of some 50 bytes, cheaper than the HMAC that signs, so they are
  // not cached: the plaintext lives only as long as this attempt.
  const secrets = openSecrets(deps.webhookSecretKeys, webhook.issuerId, endpoint);
  const body = buildEnvelope(webhook);
  const headers = {
    ...signatureHeaders(
      { ...secrets, previousSecretExpiresAt: endpoint.previousSecretExpiresAt },
      webhook.id,
      body,
      startedAt,
    ),
  };
  const sent = await sendWebhook(deps.webhookDestinations, endpoint.url, headers, body, deps.webhookAttemptTimeoutMs);
  deps.logger.debug(
    { webhookId: webhook.id, attemptNumber: input.attemptNumber, statusCode: sent.statusCode, ok: sent.ok },
    'webhook attempt',
  );
  const attempt: AttemptRecord = {
    startedAt,
    statusCode: sent.statusCode,
    latencyMs: sent.latencyMs,
    outcome: sent.ok ? 'succeeded' : 'failed',
    errorClass: sent.errorClass,
    error: sent.error,
  };
  if (resultOf(attempt).outcome === 'undeliverable')
    deps.logger.warn(
      { webhookId: webhook.id, issuerId: webhook.issuerId, error: sent.error },
      'webhook destination refused',
    );
  // The relay's row is done unless a delivery workflow must retry it.
  const done = resultOf(attempt).outcome !== 'failed' || input.nextAttemptInMs === null;
  return recordAttempt(deps.db, input, attempt, relayed && done);
}

function undeliverableReason(
  endpoint: AttemptState['endpoint'],
  type: string,
): { errorClass: AttemptErrorClass; error: string } | null {
  if (!endpoint)
    return {
      errorClass: 'not_configured',
      error: 'not_configured: the issuer has no webhook endpoint (PUT /api/v2/webhook-endpoint, then replay)',
    };
  if (!endpoint.enabledTypes.includes(type))
    return { errorClass: 'type_not_enabled', error: `type_not_enabled: the webhook endpoint does not enable ${type}` };
  return null;
}

/**
 * Writes the attempt and the webhook's new state in one statement; a second write of the same
 * attempt loses and returns what the first recorded. The guard keeps a late record of an older
 * attempt from overwriting a newer state.
 */
export async function recordAttempt(
  db: Db,
  input: AttemptInput,
  attempt: AttemptRecord,
  relayed = false,
): Promise<AttemptResult> {
  const result = resultOf(attempt);
  const final = result.outcome !== 'failed' || input.nextAttemptInMs === null;
  const status = result.outcome === 'succeeded' ? 'delivered' : final ? 'failed' : 'delivering';
  const nextAttemptAt = final
    ? null
    : new Date(attempt.startedAt.getTime() + attempt.latencyMs + input.nextAttemptInMs!);
  const deliveredAt = status === 'delivered' ? attempt.startedAt : null;
  const relayedAt = relayed ? attempt.startedAt : null;
  // On the pool, not through Prisma: one of these per delivered webhook (prisma/sql-transaction.ts).
  const [written] = await sqlQuery<Array<{ recorded: number; type: string }>>(
    db,
    Prisma.sql`
    WITH recorded AS (
      INSERT INTO webhook_attempt (id, webhook_id, attempt_number, started_at, status_code, latency_ms, outcome, error_class, error)
      VALUES (${`${input.webhookId}/attempt/${input.attemptNumber}`}, ${input.webhookId}, ${input.attemptNumber}, ${attempt.startedAt},
              ${attempt.statusCode}::int, ${attempt.latencyMs}::int, ${attempt.outcome}, ${attempt.errorClass}, ${attempt.error})
      ON CONFLICT DO NOTHING
      RETURNING 1),
    webhook_state AS (
      UPDATE webhook SET status = ${status}, attempt_count = ${input.attemptNumber}::int, last_attempt_at = ${attempt.startedAt},
             next_attempt_at = ${nextAttemptAt}::timestamptz, delivered_at = coalesce(${deliveredAt}::timestamptz, delivered_at),
             updated_at = ${attempt.startedAt},
             relayed_at = coalesce(${relayedAt}::timestamptz, relayed_at),
             relay_claimed_until = CASE WHEN ${relayedAt}::timestamptz IS NULL THEN relay_claimed_until END
       WHERE id = ${input.webhookId} AND attempt_count < ${input.attemptNumber}::int AND EXISTS (SELECT 1 FROM recorded))
    SELECT (SELECT count(*)::int FROM recorded) AS recorded, (SELECT type FROM webhook WHERE id = ${input.webhookId}) AS type`,
  );
  if (written.recorded === 0) {
    const stored = (await loadAttemptState(db, input.webhookId, input.attemptNumber))?.recorded;
    return stored ? resultOf(stored) : result;
  }
  webhookAttempts.inc({ type: written.type, outcome: result.outcome });
  return result;
}

export function resultOf(attempt: RecordedAttempt): AttemptResult {
  const undeliverable = attempt.errorClass !== null && UNDELIVERABLE_CLASSES.has(attempt.errorClass);
  const outcome = attempt.outcome === 'succeeded' ? 'succeeded' : undeliverable ? 'undeliverable' : 'failed';
  return { outcome, statusCode: attempt.statusCode, error: attempt.error };
}
