// What a migration needs that SQL cannot do, run by prisma/migrate.ts inside the named
// migration's transaction, before its SQL: if either fails, neither is applied, and the next
// run tries both again. A step must be idempotent and must not need anything on a database
// where it has nothing to do (a fresh one).
import type pg from 'pg';
import type { KeyRing } from '../core/crypto/key-ring';
import { sealSecrets } from '../core/webhooks/secret-sealing';

export interface DataStepContext {
  client: pg.ClientBase;
  /** WEBHOOK_SECRET_KEYS: needed only where webhook secrets are still in plaintext. */
  webhookSecretKeys?: KeyRing;
}

export type DataStep = (ctx: DataStepContext) => Promise<void>;

/** Rows sealed per statement: a bounded batch in memory, one round trip each. */
const SEAL_BATCH = 500;

/**
 * Issue 13, finding 3: seals the plaintext `secret` and `previous_secret` of every endpoint, so
 * that the migration's SQL can drop those columns. Each webhook keeps verifying with the secret
 * its issuer holds: the same secret, now stored sealed.
 */
async function sealPlaintextWebhookSecrets({ client, webhookSecretKeys }: DataStepContext): Promise<void> {
  // Writers wait until the commit (then find the plaintext columns gone); readers go on.
  await client.query('LOCK TABLE "webhook_endpoint" IN EXCLUSIVE MODE');
  const {
    rows: [{ plaintext }],
  } = await client.query<{ plaintext: number }>(
    'SELECT count(*)::int AS plaintext FROM "webhook_endpoint" WHERE "secret_ciphertext" IS NULL',
  );
  if (plaintext === 0) return;
  if (!webhookSecretKeys) {
    throw new Error(
      `${plaintext} webhook endpoint(s) hold plaintext signing secrets; set WEBHOOK_SECRET_KEYS (docs/operating/configuration.md) so that migrating can seal them`,
    );
  }
  let after = '';
  for (let batch = 0; batch <= Math.ceil(plaintext / SEAL_BATCH); batch++) {
    const { rows } = await client.query<{ issuer_id: string; secret: string; previous_secret: string | null }>(
      `SELECT "issuer_id", "secret", "previous_secret" FROM "webhook_endpoint"
        WHERE "secret_ciphertext" IS NULL AND "issuer_id" > $1 ORDER BY "issuer_id" LIMIT $2`,
      [after, SEAL_BATCH],
    );
    if (rows.length === 0) return;
    const sealed = rows.map((r) =>
      sealSecrets(webhookSecretKeys, r.issuer_id, { secret: r.secret, previousSecret: r.previous_secret }),
    );
    await client.query(
      `UPDATE "webhook_endpoint" e
          SET "secret_key_id" = v.key_id, "secret_ciphertext" = v.secret, "previous_secret_ciphertext" = v.previous
         FROM unnest($1::text[], $2::text[], $3::bytea[], $4::bytea[]) AS v(issuer_id, key_id, secret, previous)
        WHERE e."issuer_id" = v.issuer_id`,
      [
        rows.map((r) => r.issuer_id),
        sealed.map((s) => s.secretKeyId),
        sealed.map((s) => s.secretCiphertext),
        sealed.map((s) => s.previousSecretCiphertext),
      ],
    );
    after = rows[rows.length - 1].issuer_id;
  }
  throw new Error('sealing webhook secrets did not finish within its batches');
}

/** By the name of the migration each runs before. */
export const DATA_STEPS: Readonly<Record<string, DataStep>> = {
  '20261123060100_webhook_secret_plaintext_removal': sealPlaintextWebhookSecrets,
};
