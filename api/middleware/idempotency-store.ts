// The idempotency_key table (migration 20261123040000_idempotency_keys): claim a key, store the
// answer, release a key whose request failed, delete expired keys. Times are the database's
// (now()), so every API process agrees on when a key expires.
import { randomUUID } from 'node:crypto';
import type { Db } from '../../prisma/client';

/** How long a key is kept (API.md: 24 h, as Stripe). */
export const KEY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * A claim whose request never answered (its process died mid-request) would otherwise block its
 * key for 24 h. After this lease a retry of the same request takes the claim over and runs. It
 * is far longer than any request lives (Node's server gives up on a request after 5 minutes),
 * so a request still running is never taken over.
 */
export const CLAIM_LEASE_MS = 10 * 60 * 1000;
/** Bounds of one cleanup run: batches of CLEANUP_BATCH rows, at most CLEANUP_MAX_BATCHES. */
export const CLEANUP_BATCH = 1000;
export const CLEANUP_MAX_BATCHES = 20;
/** Claim, then read the row: a row released or deleted between the two is claimed again, this often at most. */
const CLAIM_ATTEMPTS = 3;

export interface KeyRef {
  scope: string;
  key: string;
}

export interface RequestFingerprint {
  method: string;
  path: string;
  requestHash: string;
}

export type ClaimOutcome =
  | { kind: 'claimed'; claimId: string }
  | { kind: 'in_progress' }
  | { kind: 'mismatch'; first: RequestFingerprint }
  | { kind: 'completed'; status: number; sealed: Uint8Array };

/**
 * One statement claims the key: a new row, or an expired one, or a claim whose lease ran out
 * for the same request. Otherwise the row as it stands says what the caller gets.
 */
export async function claimKey(db: Db, ref: KeyRef, request: RequestFingerprint): Promise<ClaimOutcome> {
  for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
    const claimId = randomUUID();
    const claimed = await db.$queryRaw<Array<{ claim_id: string }>>`
      INSERT INTO "idempotency_key" AS k
        ("scope", "key", "method", "path", "request_hash", "status", "claim_id", "locked_at", "created_at", "expires_at")
      VALUES (${ref.scope}, ${ref.key}, ${request.method}, ${request.path}, ${request.requestHash}, 'in_progress', ${claimId},
              now(), now(), now() + ${KEY_TTL_MS}::integer * interval '1 millisecond')
      ON CONFLICT ("scope", "key") DO UPDATE SET
        "method" = EXCLUDED."method", "path" = EXCLUDED."path", "request_hash" = EXCLUDED."request_hash",
        "status" = 'in_progress', "claim_id" = EXCLUDED."claim_id", "locked_at" = now(),
        "response_status" = NULL, "response" = NULL, "created_at" = now(), "expires_at" = EXCLUDED."expires_at"
      WHERE k."expires_at" <= now()
         OR (k."status" = 'in_progress' AND k."locked_at" <= now() - ${CLAIM_LEASE_MS}::integer * interval '1 millisecond'
             AND k."method" = EXCLUDED."method" AND k."path" = EXCLUDED."path" AND k."request_hash" = EXCLUDED."request_hash")
      RETURNING "claim_id"`;
    if (claimed.length === 1) return { kind: 'claimed', claimId };
    const row = await db.idempotencyKey.findUnique({ where: { scope_key: ref } });
    if (!row) continue;
    if (row.method !== request.method || row.path !== request.path || row.requestHash !== request.requestHash) {
      return { kind: 'mismatch', first: { method: row.method, path: row.path, requestHash: row.requestHash } };
    }
    if (row.status === 'completed' && row.responseStatus !== null && row.response !== null) {
      return { kind: 'completed', status: row.responseStatus, sealed: row.response };
    }
    return { kind: 'in_progress' };
  }
  return { kind: 'in_progress' };
}

/** Stores the answer; false when the claim is no longer ours (it was taken over after its lease). */
export async function completeKey(
  db: Db,
  ref: KeyRef,
  claimId: string,
  status: number,
  sealed: Uint8Array<ArrayBuffer>,
): Promise<boolean> {
  const { count } = await db.idempotencyKey.updateMany({
    where: { scope: ref.scope, key: ref.key, claimId, status: 'in_progress' },
    data: { status: 'completed', responseStatus: status, response: sealed },
  });
  return count === 1;
}

/** Forgets a claim whose request failed without an answer worth keeping, so a retry runs. */
export async function releaseKey(db: Db, ref: KeyRef, claimId: string): Promise<void> {
  await db.idempotencyKey.deleteMany({ where: { scope: ref.scope, key: ref.key, claimId } });
}

/**
 * Deletes expired keys, oldest first, in bounded batches; returns how many. The outer
 * condition is checked again on each row, so a key claimed anew meanwhile is kept.
 */
export async function deleteExpiredKeys(db: Db): Promise<number> {
  let deleted = 0;
  for (let batch = 0; batch < CLEANUP_MAX_BATCHES; batch++) {
    const count = await db.$executeRaw`
      DELETE FROM "idempotency_key"
       WHERE "expires_at" <= now()
         AND ("scope", "key") IN (SELECT "scope", "key" FROM "idempotency_key"
                                   WHERE "expires_at" <= now() ORDER BY "expires_at" LIMIT ${CLEANUP_BATCH}::integer)`;
    deleted += count;
    if (count < CLEANUP_BATCH) break;
  }
  return deleted;
}
