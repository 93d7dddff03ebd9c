// The worker when PostgreSQL ends its connections (pg_terminate_backend, as a restart or a failover
// does): a settlement whose transaction is cut fails that attempt alone, is retried and posts
// once; idle pooled and LISTEN connections are replaced; the process lives on (an unheard 'error' on
// a pg client would end this test run) and the next purchase is processed as usual.
import assert from 'node:assert/strict';
import { FINAL_STATUSES, startStack, type Stack } from '../helpers/stack';
import type { TestIssuer } from '../helpers/app';
import { settledEvent, storedEvent, type CardRef } from '../helpers/events';
import { purchaseScenario } from '../helpers/scenario';
import { assertLedgerHealthy } from '../helpers/ledger';
import { lockRow, terminateBlockedBy, adminClient } from '../helpers/backends';

describe('worker on a database that ends its connections', function () {
  this.timeout(120_000);
  // Armed by a test: the next settlement's connection is ended while it waits for its event's lock.
  let cutNextSettlement = false;
  const attempts: string[] = [];
  let stack: Stack;
  let issuer: TestIssuer;
  let card: CardRef;
  let merchant: any;

  before(async () => {
    stack = await startStack({
      faults: {
        async beforeActivity(activity, eventId) {
          if (activity !== 'settleTransaction') return;
          attempts.push(eventId);
          if (!cutNextSettlement) return;
          cutNextSettlement = false;
          const lock = await lockRow('ingested_event', eventId);
          // Runs beside the activity: its transaction blocks on the lock, and is cut there.
          void terminateBlockedBy(lock.pid).finally(() => lock.release());
        },
      },
    });
    ({ issuer, card, merchant } = await purchaseScenario(stack.app, { offer: { cashbackRateBps: 300 } }));
  });
  after(() => stack.stop());
  afterEach(() => assertLedgerHealthy(stack.db, issuer.id));

  const settle = async (amount: number): Promise<string> => {
    const event = settledEvent(card, { amount, merchantId: merchant.id });
    // The API's own pool may meet an ended connection first and answer 503, as while a database
    // restarts; the issuer sends the event again (ingestion is idempotent by its id).
    let status = (await issuer.call('POST', '/api/v1/incoming-txn', event)).status;
    if (status === 503) status = (await issuer.call('POST', '/api/v1/incoming-txn', event)).status;
    assert.equal(status, 204);
    const row = await storedEvent(stack.db, issuer.id, 'settled', event.id);
    assert.equal(await stack.waitForStatus(row.id, FINAL_STATUSES), 'matched');
    return row.id;
  };

  const assertPostedOnce = async (id: string, amountMinor: bigint) => {
    const transfers = await stack.db.ledgerTransfer.findMany({ where: { transactionId: id } });
    assert.equal(transfers.length, 1);
    assert.equal(transfers[0].amountMinor, amountMinor);
    assert.equal(await stack.db.rewardEvent.count({ where: { transactionId: id } }), 1);
  };

  it('retries a settlement whose transaction was cut, and posts it once', async () => {
    cutNextSettlement = true;
    const id = await settle(5_000);
    assert.ok(attempts.filter((a) => a === id).length >= 2, 'the cut attempt was retried');
    await assertPostedOnce(id, 150n);
  });

  it('replaces idle pooled and LISTEN connections the server ended, and processes the next purchase', async () => {
    const admin = await adminClient();
    try {
      const { rowCount } = await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND state = 'idle' AND pid <> pg_backend_pid()`,
      );
      assert.ok(rowCount && rowCount > 0);
    } finally {
      await admin.end();
    }
    await assertPostedOnce(await settle(2_000), 60n);
  });
});
