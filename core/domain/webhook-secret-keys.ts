// The keys of WEBHOOK_SECRET_KEYS against the webhook secrets stored under them: the start-up
// check that every key id in use is configured, and the re-sealing of every endpoint under the
// first key after that variable changed (npm run admin -- webhook:reencrypt; docs/operating/security.md, "Webhook secrets at rest").
import type { Db } from '../../prisma/client';
import type { KeyRing } from '../crypto/key-ring';
import { openSecrets, sealSecrets } from '../webhooks/secret-sealing';

/** Endpoints per key id their secrets are sealed under. */
export async function sealedKeyIds(db: Db): Promise<Record<string, number>> {
  const rows = await db.$queryRaw<Array<{ keyId: string; endpoints: number }>>`
    SELECT secret_key_id AS "keyId", count(*)::int AS endpoints FROM webhook_endpoint GROUP BY secret_key_id ORDER BY secret_key_id`;
  return Object.fromEntries(rows.map((r) => [r.keyId, r.endpoints]));
}

/**
 * Refuses to start (API, worker) when some endpoint's secrets are sealed under a key the
 * configuration no longer lists: its webhooks could not be signed, nor its secret rotated.
 */
export async function assertStoredSecretsOpen(db: Db, keys: KeyRing): Promise<void> {
  const missing = Object.entries(await sealedKeyIds(db)).filter(([keyId]) => !keys.keyIds.includes(keyId));
  if (missing.length === 0) return;
  const list = missing.map(([keyId, n]) => `"${keyId}" (${n} endpoint${n === 1 ? '' : 's'})`).join(', ');
  throw new Error(
    `WEBHOOK_SECRET_KEYS lacks key id(s) that webhook secrets are sealed under: ${list}. ` +
      'List them again until `npm run admin -- webhook:reencrypt` has re-sealed every endpoint under the first key.',
  );
}

export interface ReencryptResult {
  /** Endpoints now sealed under the first key that were not before. */
  reencrypted: number;
  /** Endpoints whose secrets changed between read and write (a rotation): left as they were. */
  changedMeanwhile: number;
  /** Endpoints per key id after the run, the first key included. */
  keyIds: Record<string, number>;
}

/**
 * Re-seals, under the first key, every endpoint sealed under another one, a page at a time.
 * Each write is conditional on the sealed secret read, so a concurrent rotation is never
 * overwritten with the secret it replaced. Running it again does nothing more.
 */
export async function reencryptWebhookSecrets(
  db: Db,
  keys: KeyRing,
  options: { pageSize?: number } = {},
): Promise<ReencryptResult> {
  const pageSize = options.pageSize ?? 200;
  // Keyset pages over issuer ids end by themselves; the bound only guards that belief. Rows
  // written meanwhile are sealed under the first key by processes already configured with it.
  const maxPages = Math.ceil((await db.webhookEndpoint.count()) / pageSize) + 1;
  const result: ReencryptResult = { reencrypted: 0, changedMeanwhile: 0, keyIds: {} };
  let after = '';
  for (let page = 0; page < maxPages; page++) {
    const rows = await db.webhookEndpoint.findMany({
      where: { secretKeyId: { not: keys.primaryKeyId }, issuerId: { gt: after } },
      orderBy: { issuerId: 'asc' },
      take: pageSize,
      select: { issuerId: true, secretKeyId: true, secretCiphertext: true, previousSecretCiphertext: true },
    });
    for (const row of rows) {
      const sealed = sealSecrets(keys, row.issuerId, openSecrets(keys, row.issuerId, row));
      const { count } = await db.webhookEndpoint.updateMany({
        where: { issuerId: row.issuerId, secretCiphertext: row.secretCiphertext },
        data: sealed,
      });
      if (count === 1) result.reencrypted++;
      else result.changedMeanwhile++;
    }
    if (rows.length < pageSize) break;
    after = rows[rows.length - 1].issuerId;
  }
  result.keyIds = await sealedKeyIds(db);
  return result;
}
