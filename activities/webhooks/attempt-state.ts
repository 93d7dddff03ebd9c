// What a webhook attempt needs to know (the webhook, the issuer's endpoint with its sealed
// secrets, and the attempt's record if it was made before), read in one statement: by an
// activity's load here, or with the relay's claim of an outbox row (outbox.ts), which shares
// these SQL fragments so both read the same state the same way.
import { Prisma } from '../../prisma/generated/client';
import type { Db } from '../../prisma/client';
import { sqlQuery } from '../../prisma/sql-transaction';
import type { SealedSecrets } from '../../core/webhooks/secret-sealing';
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

/** What an attempt needs to know, read in one statement (or with the relay's claim). */
export interface AttemptState {
  webhook: { id: string; issuerId: string; type: string; createdAt: Date; data: unknown; status: string };
  /** The secrets as stored, sealed: opened only to sign an attempt that is sent. */
  endpoint: (SealedSecrets & { url: string; enabledTypes: string[]; previousSecretExpiresAt: Date | null }) | null;
  /** This attempt's record, when it was made before. */
  recorded: RecordedAttempt | null;
}

/**
 * The issuer's endpoint as JSON (see toAttemptState), given an SQL expression for the issuer id.
 * The sealed secrets come as hex; they are opened in Node, where the keys are.
 */
export const ENDPOINT_JSON = (issuerId: Prisma.Sql) => Prisma.sql`
  (SELECT jsonb_build_object('url', ep.url, 'enabledTypes', ep.enabled_types, 'secretKeyId', ep.secret_key_id,
          'secretCiphertext', encode(ep.secret_ciphertext, 'hex'), 'previousSecretCiphertext', encode(ep.previous_secret_ciphertext, 'hex'),
          'previousSecretExpiresAt', ep.previous_secret_expires_at)
     FROM webhook_endpoint ep WHERE ep.issuer_id = ${issuerId})`;

/** Columns of the attempt state, for this module's load and the relay's claim (outbox.ts). */
export const ATTEMPT_STATE_COLUMNS = (attemptNumber: number) => Prisma.sql`
  jsonb_build_object('id', w.id, 'issuerId', w.issuer_id, 'type', w.type, 'createdAt', w.created_at, 'data', w.data, 'status', w.status) AS webhook,
  ${ENDPOINT_JSON(Prisma.raw('w.issuer_id'))} AS endpoint,
  (SELECT jsonb_build_object('outcome', a.outcome, 'statusCode', a.status_code, 'errorClass', a.error_class, 'error', a.error)
     FROM webhook_attempt a WHERE a.webhook_id = w.id AND a.attempt_number = ${attemptNumber}) AS recorded`;

export interface JsonAttemptState {
  webhook: Omit<AttemptState['webhook'], 'createdAt'> & { createdAt: string };
  endpoint:
    | (Omit<
        NonNullable<AttemptState['endpoint']>,
        'secretCiphertext' | 'previousSecretCiphertext' | 'previousSecretExpiresAt'
      > & {
        secretCiphertext: string;
        previousSecretCiphertext: string | null;
        previousSecretExpiresAt: string | null;
      })
    | null;
  recorded: AttemptState['recorded'];
}

/** JSON columns (ATTEMPT_STATE_COLUMNS) into an AttemptState. */
export function toAttemptState(row: JsonAttemptState): AttemptState {
  return {
    webhook: { ...row.webhook, createdAt: new Date(row.webhook.createdAt) },
    endpoint: toEndpoint(row.endpoint),
    recorded: row.recorded,
  };
}

/** ENDPOINT_JSON into the endpoint of an AttemptState. */
export function toEndpoint(json: JsonAttemptState['endpoint']): AttemptState['endpoint'] {
  return (
    json && {
      ...json,
      secretCiphertext: Buffer.from(json.secretCiphertext, 'hex'),
      previousSecretCiphertext:
        json.previousSecretCiphertext === null ? null : Buffer.from(json.previousSecretCiphertext, 'hex'),
      previousSecretExpiresAt: json.previousSecretExpiresAt === null ? null : new Date(json.previousSecretExpiresAt),
    }
  );
}

export async function loadAttemptState(
  db: Db,
  webhookId: string,
  attemptNumber: number,
): Promise<AttemptState | undefined> {
  const [row] = await sqlQuery<JsonAttemptState[]>(
    db,
    Prisma.sql`SELECT ${ATTEMPT_STATE_COLUMNS(attemptNumber)} FROM webhook w WHERE w.id = ${webhookId}`,
  );
  return row && toAttemptState(row);
}
