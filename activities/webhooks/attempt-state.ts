// What a webhook attempt needs to know (the webhook, the delivery's endpoint with its sealed
// secrets, the delivery, and the attempt's record if it was made before), read in one
// statement: by an activity's load here, or with the relay's claim of a delivery (outbox.ts),
// which shares these SQL fragments so both read the same state the same way.
import { Prisma } from '../../prisma/generated/client';
import type { Db } from '../../prisma/client';
import { sqlQuery } from '../../prisma/sql-transaction';
import type { SealedSecrets } from '../../core/webhooks/secret-sealing';
import type { DisableAfterOverride } from '../../core/webhooks/endpoint-health';
import type { AttemptErrorClass } from './types';

export interface AttemptRecord {
  startedAt: Date;
  statusCode: number | null;
  latencyMs: number;
  outcome: 'succeeded' | 'failed';
  /** Null exactly when `error` is (a CHECK of webhook_attempt says so too). */
  errorClass: AttemptErrorClass | null;
  error: string | null;
}

/** The parts of a recorded attempt that decide its result. */
export type RecordedAttempt = Pick<AttemptRecord, 'outcome' | 'statusCode' | 'errorClass' | 'error'>;

export type EndpointState = SealedSecrets & {
  id: string;
  url: string;
  enabledTypes: string[];
  status: 'enabled' | 'disabled';
  previousSecretExpiresAt: Date | null;
  /** The issuer's override of WEBHOOK_ENDPOINT_DISABLE_AFTER (core/webhooks/endpoint-health.ts). */
  disableAfter: DisableAfterOverride;
  rateLimitPerSecond: number | null;
  /** Failures since its last success (core/webhooks/endpoint-health.ts, TRIP_AFTER_FAILURES). */
  consecutiveFailures: number;
};

/** What an attempt needs to know, read in one statement (or with the relay's claim). */
export interface AttemptState {
  webhook: {
    id: string;
    issuerId: string;
    type: string;
    createdAt: Date;
    data: unknown;
    test: boolean;
    /** The trace of the step that wrote it (core/tracing.ts); null when it was not traced. */
    traceparent?: string | null;
  };
  /** The secrets as stored, sealed: opened only to sign an attempt that is sent. Null: none (deleted, or never made). */
  endpoint: EndpointState | null;
  /** The delivery to that endpoint; null for an attempt of an issuer that had no endpoint. */
  delivery: { status: string; attemptCount: number } | null;
  /** This attempt's record, when it was made before. */
  recorded: RecordedAttempt | null;
}

/**
 * One endpoint as JSON (see toEndpoint), given the alias of a webhook_endpoint row. The sealed
 * secrets come as hex; they are opened in Node, where the keys are.
 */
export const ENDPOINT_JSON_OF = (alias: string) => {
  const ep = Prisma.raw(alias);
  return Prisma.sql`jsonb_build_object('id', ${ep}.id, 'url', ${ep}.url, 'enabledTypes', ${ep}.enabled_types, 'status', ${ep}.status,
    'secretKeyId', ${ep}.secret_key_id, 'secretCiphertext', encode(${ep}.secret_ciphertext, 'hex'),
    'previousSecretCiphertext', encode(${ep}.previous_secret_ciphertext, 'hex'), 'previousSecretExpiresAt', ${ep}.previous_secret_expires_at,
    'rateLimitPerSecond', ${ep}.rate_limit_per_second, 'consecutiveFailures', ${ep}.consecutive_failures,
    'disableAfter', (SELECT webhook_endpoint_disable_after FROM issuer WHERE id = ${ep}.issuer_id))`;
};

/** Every endpoint of an issuer as a JSON array, oldest first (the lifecycle's context reads these). */
export const ENDPOINTS_JSON = (issuerId: Prisma.Sql) => Prisma.sql`
  (SELECT coalesce(jsonb_agg(${ENDPOINT_JSON_OF('ep')} ORDER BY ep.created_at, ep.id), '[]'::jsonb)
     FROM webhook_endpoint ep WHERE ep.issuer_id = ${issuerId})`;

/**
 * The endpoint an attempt of an old delivery run goes to: runs started before endpoints had
 * ids name none, and meant the issuer's one endpoint, which became its first (oldest).
 */
const FIRST_ENDPOINT_ID = Prisma.sql`(SELECT f.id FROM webhook_endpoint f WHERE f.issuer_id = w.issuer_id ORDER BY f.created_at, f.id LIMIT 1)`;

/**
 * Columns of the attempt state for the webhook `w`, the endpoint whose id is `endpointId` (SQL)
 * and the attempt number `attemptNumber` (SQL): this module's load and the relay's claim.
 */
export const ATTEMPT_STATE_COLUMNS = (endpointId: Prisma.Sql, attemptNumber: Prisma.Sql) => Prisma.sql`
  jsonb_build_object('id', w.id, 'issuerId', w.issuer_id, 'type', w.type, 'createdAt', w.created_at, 'data', w.data, 'test', w.test,
    'traceparent', w.traceparent) AS webhook,
  (SELECT ${ENDPOINT_JSON_OF('ep')} FROM webhook_endpoint ep WHERE ep.id = ${endpointId}) AS endpoint,
  (SELECT jsonb_build_object('status', d.status, 'attemptCount', d.attempt_count)
     FROM webhook_delivery d WHERE d.webhook_id = w.id AND d.endpoint_id = ${endpointId}) AS delivery,
  (SELECT jsonb_build_object('outcome', a.outcome, 'statusCode', a.status_code, 'errorClass', a.error_class, 'error', a.error)
     FROM webhook_attempt a WHERE a.webhook_id = w.id AND a.endpoint_id IS NOT DISTINCT FROM ${endpointId}
      AND a.attempt_number = ${attemptNumber}) AS recorded`;

export type JsonEndpoint = Omit<
  EndpointState,
  'secretCiphertext' | 'previousSecretCiphertext' | 'previousSecretExpiresAt'
> & {
  secretCiphertext: string;
  previousSecretCiphertext: string | null;
  previousSecretExpiresAt: string | null;
};

export interface JsonAttemptState {
  webhook: Omit<AttemptState['webhook'], 'createdAt'> & { createdAt: string };
  endpoint: JsonEndpoint | null;
  delivery: AttemptState['delivery'];
  recorded: AttemptState['recorded'];
}

/** JSON columns (ATTEMPT_STATE_COLUMNS) into an AttemptState. */
export function toAttemptState(row: JsonAttemptState): AttemptState {
  return {
    webhook: { ...row.webhook, createdAt: new Date(row.webhook.createdAt) },
    endpoint: row.endpoint && toEndpoint(row.endpoint),
    delivery: row.delivery,
    recorded: row.recorded,
  };
}

/** ENDPOINT_JSON_OF into an EndpointState. */
export function toEndpoint(json: JsonEndpoint): EndpointState {
  return {
    ...json,
    secretCiphertext: Buffer.from(json.secretCiphertext, 'hex'),
    previousSecretCiphertext:
      json.previousSecretCiphertext === null ? null : Buffer.from(json.previousSecretCiphertext, 'hex'),
    previousSecretExpiresAt: json.previousSecretExpiresAt === null ? null : new Date(json.previousSecretExpiresAt),
  };
}

/**
 * The state of attempt `attemptNumber` of the webhook's delivery to `endpointId`; without an
 * endpoint id (a delivery run started before endpoints had ids), to the issuer's first endpoint.
 */
export async function loadAttemptState(
  db: Db,
  input: { webhookId: string; endpointId?: string; attemptNumber: number },
): Promise<AttemptState | undefined> {
  const endpointId = input.endpointId === undefined ? FIRST_ENDPOINT_ID : Prisma.sql`${input.endpointId}::text`;
  const [row] = await sqlQuery<JsonAttemptState[]>(
    db,
    Prisma.sql`SELECT ${ATTEMPT_STATE_COLUMNS(endpointId, Prisma.sql`${input.attemptNumber}::int`)} FROM webhook w WHERE w.id = ${input.webhookId}`,
  );
  return row && toAttemptState(row);
}
