// Migration 20261124110000_handover_queue on a database written by the code before it: events
// still waiting for their hand-over (handed_over_at NULL) move to the queue with their refused
// attempts, queued when they were stored or, for a reversal, when it was recorded; events
// already handed over stay out of it.
import assert from 'node:assert/strict';
import pg from 'pg';
import { migrate } from '../../prisma/migrate';
import { databaseBefore } from '../helpers/databases';

const MIGRATION = '20261124110000_handover_queue';

describe(`prisma/migrations: ${MIGRATION}`, function () {
  this.timeout(60_000);
  let client: pg.Client;

  before(async () => {
    const url = await databaseBefore('handover_queue', MIGRATION);
    client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`INSERT INTO issuer (id, name, environment) VALUES ('iss_m', 'Old issuer', 'sandbox')`);
    const event = (id: string, state: string, handedOverAt: string | null, attempts: number, stateChangedAt?: string) =>
      client.query(
        `INSERT INTO ingested_event (id, issuer_id, kind, external_id, fingerprint, state, payload, chg_id, cardholder_id,
           card_id, amount_minor, currency, event_created_at, workflow_id, received_at, state_changed_at, handed_over_at,
           handover_attempts)
         VALUES ($1, 'iss_m', 'auth', $1, 'f', $2, '{}', 'chg_m', 'ch_m', 'card_m', 100, 'usd', now(), 'txn/iss_m/' || $1,
           '2026-11-20T10:00:00Z', $3, $4, $5)`,
        [id, state, stateChangedAt ?? null, handedOverAt, attempts],
      );
    await event('auth_waiting', 'approved', null, 2);
    await event('auth_reversed', 'reversed', null, 0, '2026-11-20T11:00:00Z');
    await event('auth_done', 'approved', '2026-11-20T10:00:01Z', 0);
    await migrate(url);
  });
  after(async () => {
    await client?.end();
  });

  it('queues the waiting events with their attempts, and only those', async () => {
    const { rows } = await client.query(
      `SELECT event_id AS id, queued_at AS "queuedAt", attempts FROM handover_pending ORDER BY event_id`,
    );
    assert.deepEqual(rows, [
      { id: 'auth_reversed', queuedAt: new Date('2026-11-20T11:00:00Z'), attempts: 0 },
      { id: 'auth_waiting', queuedAt: new Date('2026-11-20T10:00:00Z'), attempts: 2 },
    ]);
  });

  it('leaves no event in the pending-hand-over index: the queue holds them now', async () => {
    const { rows } = await client.query(`SELECT id FROM ingested_event WHERE handed_over_at IS NULL`);
    assert.deepEqual(rows, []);
  });
});
