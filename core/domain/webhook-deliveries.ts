// Deliveries: one per webhook and endpoint, the outbox entries the worker's relays claim
// (worker/webhook-relay.ts). Written here so the lifecycle's steps, the reward-event scans and
// the API (test events, recover) make them the same way: each webhook goes to every enabled
// endpoint of its issuer that subscribes to its type; a disabled endpoint that subscribes gets
// its delivery `skipped` at once (nothing sent, nothing scheduled) so that `recover` can send
// it after the endpoint is enabled again.
import { Prisma } from '../../prisma/generated/client';
import type { Db } from '../../prisma/client';
import { sqlQuery } from '../../prisma/sql-transaction';
import { newId } from '../ids';
import { TRIP_AFTER_FAILURES } from '../webhooks/endpoint-health';

/** Channel whose NOTIFY, delivered at commit, wakes the relays. */
export const OUTBOX_CHANNEL = 'rewards_webhook_outbox';

/**
 * An INSERT of the deliveries of the webhook rows a CTE named `source` returns (columns id,
 * issuer_id, type, created_at): one per endpoint of the issuer subscribing to the type. With
 * `claimMs`, the enabled ones are written already claimed for the writer's own relay, except
 * to a tripped endpoint, whose deliveries the relays take one probe at a time.
 */
export function deliveriesOf(source: string, claimMs?: number): Prisma.Sql {
  const claimed = Prisma.sql`(${claimMs !== undefined} AND ep.consecutive_failures < ${TRIP_AFTER_FAILURES})`;
  return Prisma.sql`
    INSERT INTO webhook_delivery (webhook_id, endpoint_id, issuer_id, status, relayed_at, relay_claimed_until, created_at, updated_at)
    SELECT s.id, ep.id, s.issuer_id,
           CASE WHEN ep.status = 'disabled' THEN 'skipped' WHEN ${claimed} THEN 'delivering' ELSE 'pending' END,
           CASE WHEN ep.status = 'disabled' THEN s.created_at END,
           CASE WHEN ep.status = 'enabled' AND ${claimed} THEN now() + ${claimMs ?? 0} * interval '1 millisecond' END,
           s.created_at, s.created_at
      FROM ${Prisma.raw(source)} s JOIN webhook_endpoint ep ON ep.issuer_id = s.issuer_id AND s.type = ANY (ep.enabled_types)
    ON CONFLICT DO NOTHING`;
}

/**
 * A test event: the type's published example, to one endpoint only, recorded like any other
 * webhook (its attempts, status and replay), with `"test": true` in the envelope.
 */
export async function recordTestWebhook(
  db: Db,
  input: { issuerId: string; endpointId: string; type: string; data: unknown; at: Date },
): Promise<string> {
  const id = newId('evt');
  await sqlQuery(
    db,
    Prisma.sql`
    WITH written AS (
      INSERT INTO webhook (id, issuer_id, type, source_event_id, idempotency_key, data, test, deliveries_written, created_at, updated_at)
      VALUES (${id}, ${input.issuerId}, ${input.type}, ${input.endpointId}, ${`test:${id}`}, ${JSON.stringify(input.data)}::jsonb,
              true, true, ${input.at}, ${input.at})
      RETURNING id),
    delivery AS (
      INSERT INTO webhook_delivery (webhook_id, endpoint_id, issuer_id, status, created_at, updated_at)
      SELECT id, ${input.endpointId}, ${input.issuerId}, 'pending', ${input.at}, ${input.at} FROM written)
    SELECT pg_notify(${OUTBOX_CHANNEL}, '')::text`,
  );
  return id;
}

/**
 * `recover`: the endpoint's deliveries that failed or were skipped among the webhooks created
 * in [since, until) go back to the outbox, to be sent again by the relays at the endpoint's
 * pace (its concurrency and rate), with the same webhook ids; attempts continue their numbering.
 * Returns how many.
 */
export async function reopenDeliveries(
  db: Db,
  input: { issuerId: string; endpointId: string; since: Date; until: Date; at: Date },
): Promise<number> {
  const [row] = await sqlQuery<Array<{ count: number }>>(
    db,
    Prisma.sql`
    WITH reopened AS (
      UPDATE webhook_delivery SET status = 'pending', relayed_at = NULL, relay_claimed_until = NULL, next_attempt_at = NULL,
             relay_attempt_number = attempt_count + 1,
             updated_at = ${input.at}
       WHERE endpoint_id = ${input.endpointId} AND issuer_id = ${input.issuerId} AND status IN ('failed', 'skipped')
         AND created_at >= ${input.since} AND created_at < ${input.until}
      RETURNING 1)
    SELECT count(*)::int AS count, CASE WHEN count(*) > 0 THEN pg_notify(${OUTBOX_CHANNEL}, '')::text END AS notified FROM reopened`,
  );
  return row.count;
}
