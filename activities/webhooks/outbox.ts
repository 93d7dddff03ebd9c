// Webhook deliveries as the outbox of their relayed attempts (the first, or the first after a
// recover). A step of the lifecycle writes them in its own transaction and NOTIFYs
// OUTBOX_CHANNEL; relays (worker/webhook-relay.ts, one per worker process) claim them with
// SKIP LOCKED, so several processes share the work and no delivery is relayed by two at once
// while its claim holds.
import { Prisma } from '../../prisma/generated/client';
import type { Db } from '../../prisma/client';
import { PROBE_INTERVAL_MS, TRIP_AFTER_FAILURES } from '../../core/webhooks/endpoint-health';
import { ATTEMPT_STATE_COLUMNS, toAttemptState, type AttemptState, type EndpointState } from './attempt-state';

export { OUTBOX_CHANNEL } from '../../core/domain/webhook-deliveries';

/** A delivery, as the relay holds it. */
export interface DeliveryKey {
  webhookId: string;
  endpointId: string;
}

export interface OutboxRow extends DeliveryKey {
  issuerId: string;
  sourceEventId: string;
  type: string;
  /** The attempt the relay makes (1 for a new delivery, the next one after a recover). */
  attemptNumber: number;
  /** The attempt's state, read with the claim. */
  state: AttemptState;
  /**
   * An earlier claim held this delivery and lapsed or was given back without marking it
   * relayed: a relay died or failed mid-way, perhaps after its receiver already had the webhook.
   */
  claimedBefore?: boolean;
}

/**
 * The relay of this process, as the steps that write webhooks see it. A step writes its
 * deliveries already claimed for `claimMs` (no NOTIFY, no claim query) and, once committed,
 * hands them over with what their attempts need: on the usual path a webhook then costs the
 * database one more statement per endpoint, its attempt's record. If this process dies first,
 * the claims expire and any relay takes the deliveries from the table.
 */
export interface LocalRelay {
  claimMs: number;
  take(row: OutboxRow): void;
}

/** The rows of `keys` as SQL: (webhook_id, endpoint_id) pairs to match. */
function keysOf(keys: readonly DeliveryKey[]): Prisma.Sql {
  return Prisma.sql`(webhook_id, endpoint_id) IN (SELECT * FROM unnest(${keys.map((k) => k.webhookId)}::text[], ${keys.map((k) => k.endpointId)}::text[]))`;
}

/**
 * How many deliveries of the endpoint `ep` a claim takes: `perEndpoint`, or for a tripped
 * endpoint (core/webhooks/endpoint-health.ts) one probe once the interval since its last
 * failure has passed, else none. A disabled or deleted endpoint's deliveries are taken to be
 * skipped.
 */
function claimLimit(perEndpoint: number): Prisma.Sql {
  return Prisma.sql`CASE WHEN ep.id IS NULL OR ep.status = 'disabled' OR ep.consecutive_failures < ${TRIP_AFTER_FAILURES}
                 THEN ${perEndpoint}::int
                 WHEN ep.last_failure_at < now() - ${PROBE_INTERVAL_MS} * interval '1 millisecond' THEN 1 ELSE 0 END`;
}

/** Whether the relay sends an endpoint one delivery at a time (see claimLimit). */
export function isTripped(endpoint: EndpointState | null): boolean {
  return endpoint !== null && endpoint.status === 'enabled' && endpoint.consecutiveFailures >= TRIP_AFTER_FAILURES;
}

/**
 * Claims the oldest deliveries nobody holds, at most `perEndpoint` of each endpoint (one probe
 * of a tripped one) and `limit` in all, none of the `skipEndpoints` (whose receiver already has a relay's full share
 * in flight). Endpoints are visited one by one through the outbox index (a skip scan), so an
 * endpoint's backlog, however long, costs a claim a few index entries, not a scan past it. A
 * claim lasts `claimMs`.
 */
export async function claimOutbox(
  db: Db,
  input: { limit: number; perEndpoint: number; claimMs: number; skipEndpoints: string[] },
): Promise<OutboxRow[]> {
  const rows = await db.$queryRaw<Array<Omit<OutboxRow, 'state'> & Parameters<typeof toAttemptState>[0]>>`
    WITH RECURSIVE endpoints AS (
      (SELECT endpoint_id FROM webhook_delivery WHERE relayed_at IS NULL ORDER BY endpoint_id LIMIT 1)
      UNION ALL
      SELECT (SELECT d.endpoint_id FROM webhook_delivery d WHERE d.relayed_at IS NULL AND d.endpoint_id > e.endpoint_id
               ORDER BY d.endpoint_id LIMIT 1)
        FROM endpoints e WHERE e.endpoint_id IS NOT NULL
    ), candidates AS (
      SELECT c.* FROM endpoints e LEFT JOIN webhook_endpoint ep ON ep.id = e.endpoint_id CROSS JOIN LATERAL (
        SELECT d.webhook_id, d.endpoint_id, d.created_at, d.relay_claimed_until IS NOT NULL AS claimed_before FROM webhook_delivery d
         WHERE d.endpoint_id = e.endpoint_id AND e.endpoint_id <> ALL(${input.skipEndpoints}::text[])
           AND d.relayed_at IS NULL AND (d.relay_claimed_until IS NULL OR d.relay_claimed_until < now())
         ORDER BY d.created_at LIMIT ${claimLimit(input.perEndpoint)}
         FOR UPDATE SKIP LOCKED) c
       WHERE e.endpoint_id IS NOT NULL
    ), chosen AS (
      SELECT * FROM candidates ORDER BY created_at LIMIT ${input.limit}
    ), claimed AS (
      -- 'delivering' while the attempt is out, as for every attempt (a replay waits).
      UPDATE webhook_delivery d SET relay_claimed_until = now() + ${input.claimMs} * interval '1 millisecond',
             status = CASE WHEN d.status = 'pending' THEN 'delivering' ELSE d.status END
        FROM chosen WHERE d.webhook_id = chosen.webhook_id AND d.endpoint_id = chosen.endpoint_id
      RETURNING d.webhook_id, d.endpoint_id, d.relay_attempt_number, chosen.claimed_before
    )
    SELECT c.webhook_id AS "webhookId", c.endpoint_id AS "endpointId", w.issuer_id AS "issuerId",
           w.source_event_id AS "sourceEventId", w.type, c.claimed_before AS "claimedBefore",
           c.relay_attempt_number AS "attemptNumber",
           ${ATTEMPT_STATE_COLUMNS(Prisma.raw('c.endpoint_id'), Prisma.raw('c.relay_attempt_number'))}
      FROM claimed c JOIN webhook w ON w.id = c.webhook_id`;
  return rows.map(({ webhook, endpoint, delivery, recorded, ...row }) => ({
    ...row,
    state: toAttemptState({ webhook, endpoint, delivery, recorded }),
  }));
}

/** The relay is done with the delivery: delivered, undeliverable, or handed to its delivery workflow. */
export async function markRelayed(db: Db, key: DeliveryKey, at: Date): Promise<void> {
  await db.$executeRaw`
    UPDATE webhook_delivery SET relayed_at = ${at}, relay_claimed_until = NULL
     WHERE webhook_id = ${key.webhookId} AND endpoint_id = ${key.endpointId}`;
}

/**
 * Extends the claims of the deliveries this relay holds (waiting for a slot or in flight) by
 * `claimMs` from now. A relay renews while it lives, so its claims can be short: when it dies,
 * its deliveries are free for another relay within one claim.
 */
export async function renewClaims(db: Db, keys: DeliveryKey[], claimMs: number): Promise<void> {
  if (keys.length === 0) return;
  await db.$executeRaw`
    UPDATE webhook_delivery SET relay_claimed_until = now() + ${claimMs} * interval '1 millisecond'
     WHERE ${keysOf(keys)} AND relayed_at IS NULL`;
}

/** Gives claimed deliveries back after `retryInMs` (a relay that failed mid-way, or is stopping). */
export async function releaseClaim(db: Db, keys: DeliveryKey[], retryInMs: number): Promise<void> {
  if (keys.length === 0) return;
  await db.$executeRaw`
    UPDATE webhook_delivery SET relay_claimed_until = now() + ${retryInMs} * interval '1 millisecond'
     WHERE ${keysOf(keys)} AND relayed_at IS NULL`;
}

/** Gives back deliveries this relay claimed but never started: free at once, and not counted as claimed before. */
export async function unclaim(db: Db, keys: DeliveryKey[]): Promise<void> {
  if (keys.length === 0) return;
  await db.$executeRaw`
    UPDATE webhook_delivery SET relay_claimed_until = NULL WHERE ${keysOf(keys)} AND relayed_at IS NULL`;
}

/**
 * The deliveries a step of this process has just written claimed, as its relay takes them:
 * one per endpoint of the issuer that is enabled, not tripped and subscribes to the type, as
 * deliveriesOf (core/domain/webhook-deliveries.ts) wrote them claimed from the same endpoints.
 */
export function writtenOutboxRows(
  webhook: { id: string; issuerId: string; type: string; sourceEventId: string; data: unknown; createdAt: Date },
  endpoints: readonly EndpointState[],
): OutboxRow[] {
  const { sourceEventId, ...stored } = webhook;
  return endpoints
    .filter((ep) => ep.status === 'enabled' && !isTripped(ep) && ep.enabledTypes.includes(webhook.type))
    .map((endpoint) => ({
      webhookId: webhook.id,
      endpointId: endpoint.id,
      issuerId: webhook.issuerId,
      sourceEventId,
      type: webhook.type,
      attemptNumber: 1,
      state: {
        webhook: { ...stored, test: false },
        endpoint,
        delivery: { status: 'delivering', attemptCount: 0 },
        recorded: null,
      },
    }));
}
