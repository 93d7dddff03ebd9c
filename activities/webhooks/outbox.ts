// The webhook table as the outbox of first delivery attempts. A step of the lifecycle writes
// the row in its own transaction and NOTIFYs OUTBOX_CHANNEL; relays (worker/webhook-relay.ts,
// one per worker process) claim rows with SKIP LOCKED, so several processes share the work
// and no row is relayed by two at once while its claim holds.
import type { Db } from '../../prisma/client';
import { ATTEMPT_STATE_COLUMNS, toAttemptState, type AttemptState } from './attempt-state';

export const OUTBOX_CHANNEL = 'rewards_webhook_outbox';

export interface OutboxRow {
  id: string;
  issuerId: string;
  sourceEventId: string;
  type: string;
  /** The first attempt's state, read with the claim. */
  state: AttemptState;
  /**
   * An earlier claim held this row and lapsed or was given back without marking it relayed:
   * a relay died or failed mid-way, perhaps after its receiver already had the webhook.
   */
  claimedBefore?: boolean;
}

/**
 * The relay of this process, as the steps that write webhooks see it. A step writes its webhook
 * already claimed for `claimMs` (no NOTIFY, no claim query) and, once committed, hands it over
 * with what its first attempt needs: on the usual path a webhook then costs the database one
 * more statement, its attempt's record. If this process dies first, the claim expires and any
 * relay takes the row from the table.
 */
export interface LocalRelay {
  claimMs: number;
  take(row: OutboxRow): void;
}

/**
 * Claims the oldest rows nobody holds: at most `limit` in all and `perIssuer` of one issuer
 * (so one issuer's burst cannot fill a relay), none of the `skipIssuers` (issuers whose
 * receiver already has a relay's full share in flight). A claim lasts `claimMs`.
 */
export async function claimOutbox(
  db: Db,
  input: { limit: number; perIssuer: number; claimMs: number; skipIssuers: string[] },
): Promise<OutboxRow[]> {
  const rows = await db.$queryRaw<Array<Omit<OutboxRow, 'state'> & Parameters<typeof toAttemptState>[0]>>`
    WITH candidates AS (
      SELECT id, issuer_id, created_at, relay_claimed_until IS NOT NULL AS claimed_before FROM webhook
       WHERE relayed_at IS NULL AND (relay_claimed_until IS NULL OR relay_claimed_until < now())
         AND issuer_id <> ALL(${input.skipIssuers}::text[])
       ORDER BY created_at LIMIT ${input.limit * 4}
       FOR UPDATE SKIP LOCKED
    ), chosen AS (
      SELECT id, claimed_before FROM (
        SELECT id, created_at, claimed_before, row_number() OVER (PARTITION BY issuer_id ORDER BY created_at) AS n FROM candidates
      ) ranked WHERE n <= ${input.perIssuer} ORDER BY created_at LIMIT ${input.limit}
    ), claimed AS (
      -- 'delivering' while the first attempt is out, as for every attempt (a replay waits).
      UPDATE webhook w SET relay_claimed_until = now() + ${input.claimMs} * interval '1 millisecond',
             status = CASE WHEN w.status = 'pending' THEN 'delivering' ELSE w.status END
        FROM chosen WHERE w.id = chosen.id
      RETURNING w.*, chosen.claimed_before
    )
    SELECT w.id, w.issuer_id AS "issuerId", w.source_event_id AS "sourceEventId", w.type, w.claimed_before AS "claimedBefore",
           ${ATTEMPT_STATE_COLUMNS(1)}
      FROM claimed w`;
  return rows.map(({ webhook, endpoint, recorded, ...row }) => ({
    ...row,
    state: toAttemptState({ webhook, endpoint, recorded }),
  }));
}

/** The relay is done with the row: delivered, undeliverable, or handed to its delivery workflow. */
export async function markRelayed(db: Db, id: string, at: Date): Promise<void> {
  await db.webhook.update({ where: { id }, data: { relayedAt: at, relayClaimedUntil: null } });
}

/**
 * Extends the claims of the rows this relay holds (waiting for a slot or in flight) by
 * `claimMs` from now. A relay renews while it lives, so its claims can be short: when it dies,
 * its rows are free for another relay within one claim.
 */
export async function renewClaims(db: Db, ids: string[], claimMs: number): Promise<void> {
  if (ids.length === 0) return;
  await db.$executeRaw`
    UPDATE webhook SET relay_claimed_until = now() + ${claimMs} * interval '1 millisecond'
     WHERE id = ANY(${ids}::text[]) AND relayed_at IS NULL`;
}

/** Gives a claimed row back after `retryInMs` (a relay that failed mid-way, or is stopping). */
export async function releaseClaim(db: Db, ids: string[], retryInMs: number): Promise<void> {
  if (ids.length === 0) return;
  await db.$executeRaw`
    UPDATE webhook SET relay_claimed_until = now() + ${retryInMs} * interval '1 millisecond'
     WHERE id = ANY(${ids}::text[]) AND relayed_at IS NULL`;
}

/** Gives back rows this relay claimed but never started: free at once, and not counted as claimed before. */
export async function unclaim(db: Db, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.$executeRaw`
    UPDATE webhook SET relay_claimed_until = NULL WHERE id = ANY(${ids}::text[]) AND relayed_at IS NULL`;
}

/** A webhook a step of this process has just written and claimed, as its relay takes it. */
export function writtenOutboxRow(
  webhook: { id: string; issuerId: string; type: string; sourceEventId: string; data: unknown; createdAt: Date },
  endpoint: AttemptState['endpoint'],
): OutboxRow {
  const { sourceEventId, ...stored } = webhook;
  return {
    id: webhook.id,
    issuerId: webhook.issuerId,
    sourceEventId,
    type: webhook.type,
    state: { webhook: { ...stored, status: 'delivering' }, endpoint, recorded: null },
  };
}
