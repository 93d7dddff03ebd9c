// What a migration needs that SQL cannot do, run by prisma/migrate.ts inside the named
// migration's transaction, before its SQL: if either fails, neither is applied, and the next
// run tries both again. A step must be idempotent and must not need anything on a database
// where it has nothing to do (a fresh one).
import type pg from 'pg';
import type { KeyRing } from '../core/crypto/key-ring';
import { sealSecrets } from '../core/webhooks/secret-sealing';
import { cashbackPayoutsDataStep } from './data-step-cashback-payouts';

export interface DataStepContext {
  client: pg.ClientBase;
  /** WEBHOOK_SECRET_KEYS: needed only where webhook secrets are still in plaintext. */
  webhookSecretKeys?: KeyRing;
}

/** Resolves to a report for the operator when the step found something to tell (kept with the migration). */
export type DataStep = (ctx: DataStepContext) => Promise<string | void>;

/** Rows sealed per statement: a bounded batch in memory, one round trip each. */
const SEAL_BATCH = 500;

/**
 * Seals the plaintext `secret` and `previous_secret` of every endpoint, so
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

/** Event ids listed in a report at most; the count is always complete. */
const REPORTED_IDS = 50;

/**
 * Finds stored refunds and settlements in another currency than the purchase or authorization
 * they name, which ingestion now refuses (currency_mismatch). Nothing is rewritten: corrections
 * are new postings, an operator's decision. The report names how many and the first ids; a
 * refund not yet processed claws back nothing (activities/lifecycle/refund.ts).
 */
async function reportCurrencyMismatches({ client }: DataStepContext): Promise<string | void> {
  const { rows } = await client.query<{ kind: string; id: string }>(
    `SELECT 'refund' AS kind, r.id FROM ingested_event r JOIN ingested_event p ON p.id = r.related_event_id
      WHERE r.kind = 'settled' AND r.state = 'refunded' AND r.currency <> p.currency
     UNION ALL
     SELECT 'settlement', s.id FROM ingested_event s JOIN ingested_event a
         ON a.issuer_id = s.issuer_id AND a.kind = 'auth' AND a.external_id = s.authorization_external_id
      WHERE s.kind = 'settled' AND s.state = 'settled' AND s.currency <> a.currency
     ORDER BY 1, 2`,
  );
  if (rows.length === 0) return;
  const count = (kind: string) => rows.filter((r) => r.kind === kind).length;
  const ids = rows.slice(0, REPORTED_IDS).map((r) => r.id);
  return (
    `${rows.length} stored event(s) in another currency than the event they name ` +
    `(${count('refund')} refund(s), ${count('settlement')} settlement(s)); postings left as they are. ` +
    `First ids: ${ids.join(', ')}${rows.length > ids.length ? ', ...' : ''}`
  );
}

/** By the name of the migration each runs before. */
export const DATA_STEPS: Readonly<Record<string, DataStep>> = {
  '20261123060100_webhook_secret_plaintext_removal': sealPlaintextWebhookSecrets,
  '20261125000000_currency_mismatch': reportCurrencyMismatches,
  '20261128100100_cashback_existing_data': cashbackPayoutsDataStep,
};
