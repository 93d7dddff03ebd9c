// The worker when the database host stops answering instead of refusing: a TCP proxy between the
// service and the real PostgreSQL stops forwarding, closing nothing, as a settlement step starts.
// The step's attempt fails within the statement's bound rather than hanging until the host is
// back, is retried (each retry bounded by the connect time-out while the host is silent), and
// once the host answers again the purchase is settled and posted once.
import assert from 'node:assert/strict';
import { startStack, type Stack } from '../helpers/stack';
import type { TestIssuer } from '../helpers/app';
import { settledEvent, storedEvent, type CardRef } from '../helpers/events';
import { purchaseScenario } from '../helpers/scenario';
import { assertLedgerHealthy } from '../helpers/ledger';
import { startSilentProxy, type SilentProxy } from '../helpers/silent-proxy';
import type { DatabaseTimeouts } from '../../prisma/bounded-client';
import { createDb, type Db } from '../../prisma/client';
import { testDatabaseUrl } from '../helpers/env';

const TIMEOUTS: DatabaseTimeouts = { connectTimeoutMs: 1_000, statementTimeoutMs: 1_000, transactionTimeoutMs: 5_000 };
/** Long enough that a step waiting for the host (today's hang) is told apart from one that failed and was retried. */
const SILENT_MS = 8_000;

describe('worker on a database host that stops answering', function () {
  this.timeout(120_000);
  const attempts: Array<{ eventId: string; atMs: number }> = [];
  let silenceNextSettlement = false;
  let silencedAtMs = 0;
  let proxy: SilentProxy;
  // The test's own view of the database, beside the proxy the service goes through.
  let observer: Db;
  let stack: Stack;
  let issuer: TestIssuer;
  let card: CardRef;
  let merchant: any;

  before(async () => {
    proxy = await startSilentProxy();
    observer = createDb(testDatabaseUrl(), 2);
    stack = await startStack({
      database: { url: proxy.databaseUrl, timeouts: TIMEOUTS },
      faults: {
        async beforeActivity(activity, eventId) {
          if (activity !== 'settleTransaction') return;
          attempts.push({ eventId, atMs: performance.now() });
          if (!silenceNextSettlement) return;
          silenceNextSettlement = false;
          proxy.silence();
          silencedAtMs = performance.now();
          setTimeout(() => proxy.speak(), SILENT_MS).unref();
        },
      },
    });
    ({ issuer, card, merchant } = await purchaseScenario(stack.app, { offer: { cashbackRateBps: 300 } }));
  });
  after(async () => {
    proxy.speak();
    await stack?.stop();
    await proxy?.close();
    await observer?.$disconnect();
  });
  afterEach(() => assertLedgerHealthy(observer, issuer.id));

  const outcome = async (eventId: string): Promise<string> => {
    const deadline = performance.now() + 60_000;
    for (;;) {
      const { rewardStatus } = await observer.ingestedEvent.findUniqueOrThrow({ where: { id: eventId } });
      if (rewardStatus !== 'pending') return rewardStatus;
      assert.ok(performance.now() < deadline, `event ${eventId} still pending`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  it('fails the step within its bound while the host is silent, retries it, and posts it once after', async () => {
    silenceNextSettlement = true;
    const event = settledEvent(card, { amount: 5_000, merchantId: merchant.id });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', event)).status, 204);
    const row = await storedEvent(observer, issuer.id, 'settled', event.id);
    assert.equal(await outcome(row.id), 'matched');

    const ofEvent = attempts.filter((a) => a.eventId === row.id);
    assert.ok(ofEvent.length >= 2, `the attempt that met the silent host was retried (${ofEvent.length} attempts)`);
    // The first attempt gave up on its own (statement bound and margin) and the next began while
    // the host was still silent: it did not wait for the host to come back.
    assert.ok(ofEvent[1].atMs - silencedAtMs < SILENT_MS, 'a retry began before the host answered again');
    const transfers = await observer.ledgerTransfer.findMany({ where: { transactionId: row.id } });
    assert.equal(transfers.length, 1);
    assert.equal(transfers[0].amountMinor, 150n);
    assert.equal(await observer.rewardEvent.count({ where: { transactionId: row.id } }), 1);
  });
});
