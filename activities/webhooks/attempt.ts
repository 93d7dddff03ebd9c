// One webhook delivery attempt: one signed HTTP POST to one endpoint, recorded with the
// delivery's new status and the endpoint's health in one statement. Idempotent per
// (webhookId, endpointId, attemptNumber): an attempt already recorded is returned as it was,
// never sent or recorded again. Used by the WebhookDelivery workflow's activities (index.ts)
// and by the worker's relay for the attempt of each outbox entry (worker/webhook-relay.ts).
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { inSpan } from '../../core/tracing';
import { Prisma } from '../../prisma/generated/client';
import type { Db } from '../../prisma/client';
import { sqlQuery } from '../../prisma/sql-transaction';
import type { Logger } from '../../core/logger';
import { buildEnvelope } from '../../core/webhooks/envelope';
import { signatureHeaders } from '../../core/webhooks/signing';
import { openSecrets } from '../../core/webhooks/secret-sealing';
import {
  DEFAULT_ENDPOINT_DISABLE_AFTER_MS,
  disableAfterMs,
  disableIfFailingSince,
} from '../../core/webhooks/endpoint-health';
import type { KeyRing } from '../../core/crypto/key-ring';
import type { WebhookDestinations } from '../../core/webhooks/destination-guard';
import { sendWebhook } from './send';
import { webhookAttempts, webhookDeliveriesSkipped } from '../../core/metrics';
import type { AttemptErrorClass, AttemptInput, AttemptResult } from './types';
import { loadAttemptState, type AttemptRecord, type AttemptState, type RecordedAttempt } from './attempt-state';
import { announceDisabled, type DisabledEndpoint } from './endpoint-disabled';

export interface WebhookDeps {
  db: Db;
  logger: Logger;
  clock: { now(): Date };
  /** Where webhooks may go (core/webhooks/destination-guard.ts), checked before every attempt. */
  webhookDestinations: WebhookDestinations;
  /** WEBHOOK_SECRET_KEYS: opens the endpoint's sealed signing secrets at each attempt. */
  webhookSecretKeys: KeyRing;
  /** WEBHOOK_ENDPOINT_DISABLE_AFTER (null: never); the contract's 5 days when not given. */
  webhookEndpointDisableAfterMs?: number | null;
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

/** Failures that say something about the receiver, and so count against its health. */
const RECEIVER_FAILURES: ReadonlySet<AttemptErrorClass> = new Set<AttemptErrorClass>([
  'http_status',
  'timeout',
  'connection_error',
  'request_error',
  'destination_refused',
]);

/** Whether the delivery ends without an attempt: its endpoint was disabled or deleted since it was made. */
export function isSkipped(state: AttemptState): boolean {
  return state.delivery !== null && (state.endpoint === null || state.endpoint.status === 'disabled');
}

/**
 * An attempt's result as its record left the endpoint: its failures in a row after it, when the
 * record changed them (for the relay, which stops sending a tripped endpoint new deliveries).
 */
export type RecordedResult = AttemptResult & { endpointFailures?: number };

/** The result as the workflow's activities return it (and its history keeps it). */
export const withoutHealth = ({ endpointFailures: _, ...result }: RecordedResult): AttemptResult => result;

/**
 * Sends the attempt described by `state` (not recorded yet) and records it. `relayed` marks
 * the outbox entry done in the same statement when the outcome needs no delivery workflow.
 */
export async function attemptAndRecord(
  deps: WebhookDeps,
  state: AttemptState,
  input: AttemptInput,
  relayed = false,
): Promise<RecordedResult> {
  const startedAt = deps.clock.now();
  const { webhook, endpoint } = state;
  const reason = undeliverableReason(endpoint, webhook);
  if (reason)
    return recordAttempt(
      deps,
      state,
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
  const sent = await inSpan(
    `webhook ${webhook.type}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'rewards.webhook_id': webhook.id,
        'rewards.endpoint_id': endpoint.id,
        'http.request.method': 'POST',
      },
    },
    async (span) => {
      const result = await sendWebhook(
        deps.webhookDestinations,
        endpoint.url,
        headers,
        body,
        deps.webhookAttemptTimeoutMs,
      );
      if (result.statusCode !== null) span.setAttribute('http.response.status_code', result.statusCode);
      if (!result.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: result.error ?? undefined });
      return result;
    },
  );
  deps.logger.debug(
    { webhookId: webhook.id, endpointId: endpoint.id, attemptNumber: input.attemptNumber, statusCode: sent.statusCode },
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
      { webhookId: webhook.id, issuerId: webhook.issuerId, endpointId: endpoint.id, error: sent.error },
      'webhook destination refused',
    );
  // The relay's entry is done unless a delivery workflow must retry it.
  const done = resultOf(attempt).outcome !== 'failed' || input.nextAttemptInMs === null;
  return recordAttempt(deps, state, input, attempt, relayed && done);
}

function undeliverableReason(
  endpoint: AttemptState['endpoint'],
  { type, test }: AttemptState['webhook'],
): { errorClass: AttemptErrorClass; error: string } | null {
  if (!endpoint)
    return {
      errorClass: 'not_configured',
      error: 'not_configured: the issuer has no webhook endpoint (POST /api/v2/webhook-endpoints, then replay)',
    };
  // A test event is asked for, whatever the endpoint subscribes to.
  if (!test && !endpoint.enabledTypes.includes(type))
    return { errorClass: 'type_not_enabled', error: `type_not_enabled: the webhook endpoint does not enable ${type}` };
  return null;
}

/**
 * Writes the attempt, the delivery's new state and the endpoint's health in one statement; a
 * second write of the same attempt loses and returns what the first recorded. The guard keeps
 * a late record of an older attempt from overwriting a newer state. A failure that ends a run
 * of failures long enough disables the endpoint in the same statement; the announcement
 * follows (endpoint-disabled.ts).
 */
export async function recordAttempt(
  deps: Pick<WebhookDeps, 'db' | 'logger' | 'webhookEndpointDisableAfterMs'>,
  state: Pick<AttemptState, 'webhook' | 'endpoint'>,
  input: AttemptInput,
  attempt: AttemptRecord,
  relayed = false,
): Promise<RecordedResult> {
  const result = resultOf(attempt);
  const endpointId = state.endpoint?.id ?? input.endpointId ?? null;
  const [written] = await sqlQuery<
    Array<{ recorded: number; disabled: DisabledEndpoint | null; failures: number | null }>
  >(
    deps.db,
    Prisma.sql`
    WITH recorded AS (
      INSERT INTO webhook_attempt (id, webhook_id, endpoint_id, attempt_number, started_at, status_code, latency_ms, outcome, error_class, error)
      VALUES (${attemptId(input.webhookId, input.endpointId, input.attemptNumber)}, ${input.webhookId}, ${endpointId}, ${input.attemptNumber},
              ${attempt.startedAt}, ${attempt.statusCode}::int, ${attempt.latencyMs}::int, ${attempt.outcome}, ${attempt.errorClass}, ${attempt.error})
      ON CONFLICT DO NOTHING
      RETURNING 1),
    delivery_state AS (${deliveryUpdate(input, endpointId, attempt, relayed)}),
    health AS (${healthUpdate(deps, state, endpointId, attempt)})
    SELECT (SELECT count(*)::int FROM recorded) AS recorded, (SELECT h.consecutive_failures FROM health h) AS failures,
           (SELECT jsonb_build_object('id', h.id, 'issuerId', h.issuer_id, 'url', h.url, 'failingSince', h.failing_since,
                                      'disabledAt', h.disabled_at)
              FROM health h WHERE h.status = 'disabled' AND h.disabled_at = ${attempt.startedAt}) AS disabled`,
  );
  if (written.recorded === 0) {
    const stored = (await loadAttemptState(deps.db, input))?.recorded;
    return stored ? resultOf(stored) : result;
  }
  webhookAttempts.inc({ type: state.webhook.type, outcome: result.outcome });
  if (written.disabled) await announceDisabled(deps, written.disabled);
  return written.failures === null ? result : { ...result, endpointFailures: written.failures };
}

/**
 * Attempt ids: the first endpoint's attempts made before endpoints had ids keep theirs
 * (`<evt>/attempt/<n>`), so a delivery run started then and replayed now writes the same ids.
 */
function attemptId(webhookId: string, endpointId: string | undefined, attemptNumber: number): string {
  return endpointId === undefined
    ? `${webhookId}/attempt/${attemptNumber}`
    : `${webhookId}/${endpointId}/attempt/${attemptNumber}`;
}

function deliveryUpdate(input: AttemptInput, endpointId: string | null, attempt: AttemptRecord, relayed: boolean) {
  const result = resultOf(attempt);
  const final = result.outcome !== 'failed' || input.nextAttemptInMs === null;
  const status = result.outcome === 'succeeded' ? 'delivered' : final ? 'failed' : 'delivering';
  const nextAttemptAt = final
    ? null
    : new Date(attempt.startedAt.getTime() + attempt.latencyMs + input.nextAttemptInMs!);
  const deliveredAt = status === 'delivered' ? attempt.startedAt : null;
  const relayedAt = relayed ? attempt.startedAt : null;
  return Prisma.sql`
      UPDATE webhook_delivery SET status = ${status}, attempt_count = ${input.attemptNumber}::int, last_attempt_at = ${attempt.startedAt},
             next_attempt_at = ${nextAttemptAt}::timestamptz, delivered_at = coalesce(${deliveredAt}::timestamptz, delivered_at),
             updated_at = ${attempt.startedAt},
             relayed_at = coalesce(${relayedAt}::timestamptz, relayed_at),
             relay_claimed_until = CASE WHEN ${relayedAt}::timestamptz IS NULL THEN relay_claimed_until END
       WHERE webhook_id = ${input.webhookId} AND endpoint_id = ${endpointId} AND attempt_count < ${input.attemptNumber}::int
         AND EXISTS (SELECT 1 FROM recorded)`;
}

/**
 * The endpoint's health after this attempt. A success resets the run of failures (written at
 * most once a second while nothing changes, so a busy healthy endpoint's row is not rewritten
 * per webhook); a receiver's failure extends it, and disables the endpoint when the run began
 * before the issuer's disable-after period.
 */
function healthUpdate(
  deps: Pick<WebhookDeps, 'webhookEndpointDisableAfterMs'>,
  state: Pick<AttemptState, 'endpoint'>,
  endpointId: string | null,
  attempt: AttemptRecord,
): Prisma.Sql {
  const at = attempt.startedAt;
  if (attempt.outcome === 'succeeded')
    return Prisma.sql`
      UPDATE webhook_endpoint SET consecutive_failures = 0, failing_since = NULL, last_success_at = greatest(last_success_at, ${at})
       WHERE id = ${endpointId} AND EXISTS (SELECT 1 FROM recorded)
         AND (consecutive_failures > 0 OR last_success_at IS NULL OR last_success_at < ${at}::timestamptz - interval '1 second')
      RETURNING *`;
  if (attempt.errorClass === null || !RECEIVER_FAILURES.has(attempt.errorClass))
    return Prisma.sql`SELECT * FROM webhook_endpoint WHERE false`;
  const deploymentMs = deps.webhookEndpointDisableAfterMs ?? null;
  const configured =
    deps.webhookEndpointDisableAfterMs === undefined ? DEFAULT_ENDPOINT_DISABLE_AFTER_MS : deploymentMs;
  const before = disableIfFailingSince(at, disableAfterMs(state.endpoint?.disableAfter ?? null, configured));
  const disables = Prisma.sql`(status = 'enabled' AND coalesce(failing_since, ${at}) <= ${before}::timestamptz)`;
  return Prisma.sql`
      UPDATE webhook_endpoint SET consecutive_failures = consecutive_failures + 1, failing_since = coalesce(failing_since, ${at}),
             last_failure_at = greatest(last_failure_at, ${at}),
             status = CASE WHEN ${disables} THEN 'disabled' ELSE status END,
             disabled_reason = CASE WHEN ${disables} THEN 'failing' ELSE disabled_reason END,
             disabled_at = CASE WHEN ${disables} THEN ${at} ELSE disabled_at END
       WHERE id = ${endpointId} AND EXISTS (SELECT 1 FROM recorded)
      RETURNING *`;
}

/**
 * Ends a delivery whose endpoint was disabled or deleted: `skipped`, nothing sent, no attempt
 * recorded, and its outbox entry done. `recover` sends it once the endpoint is enabled again.
 */
export async function skipDelivery(
  db: Db,
  input: AttemptInput & { endpointId: string },
  at: Date,
): Promise<AttemptResult> {
  const [row] = await sqlQuery<Array<{ skipped: number }>>(
    db,
    Prisma.sql`
    WITH skipped AS (
      UPDATE webhook_delivery SET status = 'skipped', next_attempt_at = NULL, updated_at = ${at},
             relayed_at = coalesce(relayed_at, ${at}), relay_claimed_until = NULL
       WHERE webhook_id = ${input.webhookId} AND endpoint_id = ${input.endpointId} AND status NOT IN ('delivered', 'skipped')
      RETURNING 1)
    SELECT count(*)::int AS skipped FROM skipped`,
  );
  if (row.skipped > 0) webhookDeliveriesSkipped.inc();
  return { outcome: 'skipped', statusCode: null, error: null };
}

export function resultOf(attempt: RecordedAttempt): AttemptResult {
  const undeliverable = attempt.errorClass !== null && UNDELIVERABLE_CLASSES.has(attempt.errorClass);
  const outcome = attempt.outcome === 'succeeded' ? 'succeeded' : undeliverable ? 'undeliverable' : 'failed';
  return { outcome, statusCode: attempt.statusCode, error: attempt.error };
}
