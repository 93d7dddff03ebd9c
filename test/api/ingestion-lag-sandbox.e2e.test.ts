// A sandbox issuer's lag on the real stack (API, worker, PostgreSQL, Temporal dev server): the
// issuer's clock moves ahead by days, its events wait (the hand-over's bound is 0, so none is
// admitted), and GET /api/v2/ingestion/lag and the hand-over watch's
// rewards_handover_oldest_seconds report how long they have waited in real time: neither 0
// because they were accepted on a clock ahead of the server's, nor days.
import assert from 'node:assert/strict';
import { startStack, type Stack } from '../helpers/stack';
import { settledEvent } from '../helpers/events';
import { purchaseScenario } from '../helpers/scenario';
import { createLogger } from '../../core/logger';
import { startHandoverWatch } from '../../worker/handover-watch';
import { handoverOldestSeconds, handoverWaitingEvents } from '../../core/metrics';

const DAY_MS = 86_400_000;
/** Long enough for an age in whole seconds to have grown twice over. */
const WAIT_MS = 2_200;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('ingestion lag of a sandbox issuer whose clock is ahead', function () {
  this.timeout(120_000);
  let stack: Stack;

  before(async () => {
    stack = await startStack({ handoverMaxInFlight: 0 });
  });
  after(() => stack?.stop());

  it('reports the age of its waiting events in real time, growing with it, on the lag route and the gauge', async () => {
    const { issuer, card, merchant } = await purchaseScenario(stack.app);
    const advanced = await issuer.call('POST', '/api/v2/sandbox/clock/advance', { days: 3 });
    assert.equal(advanced.status, 200, advanced.text);
    const issuerNow = new Date(advanced.body.now);
    assert.ok(issuerNow.getTime() - Date.now() > 2.9 * DAY_MS, advanced.text);

    // Dated on the issuer's clock, as its processor would date them.
    const at = issuerNow.toISOString();
    const events = [1, 2].map(() => settledEvent(card, { merchantId: merchant.id, createdAt: at, settledAt: at }));
    const accepted = await issuer.call('POST', '/api/v1/incoming-txn', events);
    assert.equal(accepted.status, 204, accepted.text);

    const lag = async () => {
      const res = await issuer.call('GET', '/api/v2/ingestion/lag');
      assert.equal(res.status, 200, res.text);
      return res.body;
    };
    const first = await lag();
    assert.deepEqual([first.pendingEvents, first.waitingEvents], [2, 2], JSON.stringify(first));
    await sleep(WAIT_MS);
    const later = await lag();
    assert.equal(later.pendingEvents, 2);
    assert.ok(
      later.oldestPendingAgeSeconds >= 2 && later.oldestPendingAgeSeconds < 60,
      `waited about ${WAIT_MS / 1000} s of real time: ${JSON.stringify({ first, later })}`,
    );
    assert.ok(later.oldestPendingAgeSeconds > first.oldestPendingAgeSeconds, JSON.stringify({ first, later }));

    // The hand-over watch's gauge, by issuer: the same real age (a bound of 0 admits nothing).
    const watch = startHandoverWatch(
      {
        db: stack.db,
        clock: { now: () => new Date() },
        temporal: stack.engine,
        logger: createLogger('silent'),
        handoverMaxInFlight: 0,
      },
      // No grace runs out: the watch hands over again nothing that other files left admitted.
      { intervalMs: 100, busyIntervalMs: 100, metricsIntervalMs: 0, graceMs: 3_600_000 },
    );
    try {
      const gauge = await gaugeOf(issuer.id);
      assert.equal(gauge.waiting, 2);
      assert.ok(gauge.oldestSeconds >= 2 && gauge.oldestSeconds < 60, JSON.stringify(gauge));
    } finally {
      await watch.stop();
    }
  });
});

/** The watch's gauges for one issuer, once it has reported them. */
async function gaugeOf(issuerId: string): Promise<{ waiting: number; oldestSeconds: number }> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const waiting = (await handoverWaitingEvents.get()).values.find((v) => v.labels.issuer === issuerId)?.value;
    const oldest = (await handoverOldestSeconds.get()).values.find((v) => v.labels.issuer === issuerId)?.value;
    if (waiting !== undefined && oldest !== undefined) return { waiting, oldestSeconds: oldest };
    assert.ok(Date.now() < deadline, 'the watch reported the issuer’s queue');
    await sleep(100);
  }
}
