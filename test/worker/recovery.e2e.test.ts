// Recovery after a process death, in seconds and without the per-minute schedule: an event
// acknowledged by an API that died before its hand-over is handed over by the worker's
// hand-over watch at its next probe; a webhook claimed
// by a relay that died is claimed again once its short claim lapses, delivered once, and counted
// as a first attempt sent again. The measured delays are printed
// (docs/decisions/0020-recovery-in-seconds.md), not asserted.
import assert from 'node:assert/strict';
import { FINAL_STATUSES, startStack, type Stack } from '../helpers/stack';
import { newIssuer, startTestApp, type TestApp, type TestIssuer } from '../helpers/app';
import { settledEvent, storedEvent } from '../helpers/events';
import { activatedMerchant, groupWithCard } from '../helpers/scenario';
import { assertLedgerHealthy } from '../helpers/ledger';
import {
  deliveryOf,
  insertEndpoint,
  startReceiver,
  waitForWebhookStatus,
  webhookLeftByDeadRelay,
} from '../helpers/webhooks';
import { DEFAULT_RELAY_OPTIONS } from '../../worker/webhook-relay';
import { webhookFirstAttemptsResent } from '../../core/metrics';

describe('recovery after a process death', function () {
  this.timeout(120_000);
  let stack: Stack;
  // An API that stores and acknowledges events, then dies before handing them over.
  let deadApi: TestApp;
  let issuer: TestIssuer;

  before(async () => {
    stack = await startStack({ handoverWatch: {} });
    deadApi = await startTestApp({
      db: stack.db,
      temporal: stack.engine,
      handover: { enqueue: () => undefined, drain: async () => undefined },
    });
    issuer = await newIssuer(stack.app);
  });
  after(async () => {
    await deadApi.close();
    await stack.stop();
  });

  it('hands over an event whose API died after acknowledging it, and posts it once', async () => {
    const { group, card } = await groupWithCard(issuer);
    const { merchant } = await activatedMerchant(stack.app, issuer, group.id, { offer: { cashbackRateBps: 300 } });
    const event = settledEvent(card, { amount: 4_000, merchantId: merchant.id });
    const res = await deadApi.request('POST', '/api/v1/incoming-txn', { token: issuer.token, body: event });
    assert.equal(res.status, 204);
    const acknowledgedAt = performance.now();
    const row = await storedEvent(stack.db, issuer.id, 'settled', event.id);
    // Never admitted by its API, it waits for the watch: admitted at its next probe, with no grace.
    assert.equal(await stack.waitForStatus(row.id, FINAL_STATUSES, 60_000), 'matched');
    console.log(`      (acknowledged → matched without its API: ${Math.round(performance.now() - acknowledgedAt)} ms)`);
    assert.equal(await stack.db.ledgerTransfer.count({ where: { transactionId: row.id } }), 1);
    await stack.waitUntilReleased([row.id]);
    await assertLedgerHealthy(stack.db, issuer.id);
  });

  it('delivers once, after its claim lapses, a webhook claimed by a relay that died; and counts it', async () => {
    const receiver = await startReceiver();
    try {
      const endpointId = await insertEndpoint(stack.db, issuer.id, receiver.url);
      const resentBefore = (await webhookFirstAttemptsResent.get()).values[0]?.value ?? 0;
      // The dead relay's state: written and claimed as a lifecycle step writes it for its own
      // relay, which died before its first attempt was recorded.
      const id = await webhookLeftByDeadRelay(stack.db, issuer.id, endpointId, {
        claimedUntil: new Date(Date.now() + DEFAULT_RELAY_OPTIONS.claimMs),
      });
      const diedAt = performance.now();
      const row = await waitForWebhookStatus(stack.db, id, ['delivered']);
      console.log(`      (dead relay's claim → delivered: ${Math.round(performance.now() - diedAt)} ms)`);
      assert.equal(row.attemptCount, 1);
      const delivery = await deliveryOf(stack.db, id, endpointId);
      assert.deepEqual([delivery.status, delivery.attemptCount, delivery.relayClaimedUntil], ['delivered', 1, null]);
      assert.deepEqual(
        receiver.requests.map((q) => q.headers['webhook-id']),
        [id],
      );
      const resentAfter = (await webhookFirstAttemptsResent.get()).values[0]?.value ?? 0;
      assert.equal(resentAfter - resentBefore, 1, 'counted as a first attempt sent again');
    } finally {
      await receiver.close();
    }
  });
});
