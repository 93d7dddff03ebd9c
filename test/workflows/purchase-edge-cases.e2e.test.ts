// Purchases that do not follow authorize → settle → refund in order, end to end over HTTP
// with the real hand-over, Temporal and PostgreSQL, each checked by the money it moved.
import assert from 'node:assert/strict';
import { FINAL_STATUSES, startStack, TEST_HANDOVER_MAX_IN_FLIGHT, type Stack } from '../helpers/stack';
import { startTestApp, type TestIssuer } from '../helpers/app';
import { authEvent, settledEvent, storedEvent, type CardRef } from '../helpers/events';
import { purchaseScenario } from '../helpers/scenario';
import { assertLedgerHealthy } from '../helpers/ledger';
import { createSweepActivities } from '../../activities/sweeper';

describe('purchases out of the usual order', function () {
  this.timeout(120_000);
  let stack: Stack;
  let issuer: TestIssuer;
  let group: any;
  let card: CardRef;
  let merchant: any;

  before(async () => {
    stack = await startStack();
    // Cashback only: 5 %.
    ({ issuer, group, card, merchant } = await purchaseScenario(stack.app, { offer: { cashbackRateBps: 500 } }));
  });
  after(() => stack.stop());
  afterEach(() => assertLedgerHealthy(stack.db, issuer.id));

  const stored = (kind: 'auth' | 'settled', externalId: string) => storedEvent(stack.db, issuer.id, kind, externalId);
  const send = async (path: '/api/v1/incoming-auth' | '/api/v1/incoming-txn', event: object) =>
    assert.equal((await issuer.call('POST', path, event)).status, 204);
  /** The transfers booked against a transaction (clawbacks are booked against the purchase they reverse). */
  const postings = async (transactionId: string) =>
    (await stack.db.ledgerTransfer.findMany({ where: { transactionId }, orderBy: { createdAt: 'asc' } })).map((t) => [
      t.kind,
      Number(t.amountMinor),
    ]);
  const detail = async (txnId: string) =>
    (await issuer.call('GET', `/api/v2/chg/${group.id}/transaction/${txnId}/reward-detail`)).body;

  it('settles one authorization in several settlements (split shipment), each earning on its own amount', async () => {
    const auth = authEvent(card, { amount: 10_000, merchantId: merchant.id });
    await send('/api/v1/incoming-auth', auth);
    const authRow = await stored('auth', auth.id);
    assert.equal(await stack.waitForStatus(authRow.id, ['previewed', 'not_matched', 'unknown']), 'previewed');
    const parts = [6_000, 4_000].map((amount) =>
      settledEvent(card, { amount, merchantId: merchant.id, authorizationId: auth.id }),
    );
    for (const part of parts) await send('/api/v1/incoming-txn', part);
    const rows = await Promise.all(parts.map((p) => stored('settled', p.id)));
    for (const row of rows) assert.equal(await stack.waitForStatus(row.id, FINAL_STATUSES), 'matched');
    assert.deepEqual(await postings(rows[0].id), [['earn_cashback', 300]]);
    assert.deepEqual(await postings(rows[1].id), [['earn_cashback', 200]]);
    assert.equal(rows[0].workflowId, authRow.workflowId);
    assert.equal(rows[1].workflowId, authRow.workflowId);
    assert.equal(
      (await stored('auth', auth.id)).rewardStatus,
      'previewed',
      'the preview is not lapsed or voided by its settlements',
    );
    assert.deepEqual(await postings(authRow.id), []);
  });

  it('keeps a settled purchase as posted when its authorization is reversed afterwards', async () => {
    const auth = authEvent(card, { amount: 2_000, merchantId: merchant.id });
    await send('/api/v1/incoming-auth', auth);
    const authRow = await stored('auth', auth.id);
    await stack.waitForStatus(authRow.id, ['previewed']);
    const settled = settledEvent(card, { amount: 2_000, merchantId: merchant.id, authorizationId: auth.id });
    await send('/api/v1/incoming-txn', settled);
    const txn = await stored('settled', settled.id);
    assert.equal(await stack.waitForStatus(txn.id, FINAL_STATUSES), 'matched');
    await stack.client.workflow.getHandle(txn.workflowId).result();

    await send('/api/v1/incoming-auth', { ...auth, state: 'reversed' });
    const reversed = await stored('auth', auth.id);
    assert.equal(reversed.state, 'reversed');
    // The settlement is final: money comes back through a refund, never through a late reversal.
    await new Promise((r) => setTimeout(r, 1_000));
    assert.deepEqual(await postings(txn.id), [['earn_cashback', 100]]);
    assert.deepEqual([(await detail(txn.id)).status, (await detail(txn.id)).earnedAmountMinor], ['matched', 100]);
    assert.equal((await stored('auth', auth.id)).rewardStatus, 'previewed');
  });

  it('holds a refund that arrives before its purchase is processed, then claws back once the purchase settles', async () => {
    // The purchase is accepted while no hand-over runs (as with Temporal down), so it waits
    // for the sweeper; its refund is handed over at once and must wait for it.
    const quiet = await startTestApp({ db: stack.db });
    const purchase = settledEvent(card, { amount: 8_000, merchantId: merchant.id });
    assert.equal(
      (await quiet.request('POST', '/api/v1/incoming-txn', { token: issuer.token, body: purchase })).status,
      204,
    );
    await quiet.close();
    const refund = settledEvent(card, {
      state: 'refunded',
      amount: 2_000,
      relatedTransactionId: purchase.id,
      merchantId: merchant.id,
    });
    await send('/api/v1/incoming-txn', refund);
    const refundRow = await stored('settled', refund.id);
    const purchaseRow = await stored('settled', purchase.id);
    assert.equal(refundRow.workflowId, purchaseRow.workflowId);
    // The refund's run waits for the purchase: nothing is clawed back from nothing.
    await new Promise((r) => setTimeout(r, 1_500));
    assert.equal((await stored('settled', refund.id)).rewardStatus, 'pending');
    assert.deepEqual(await postings(refundRow.id), []);

    const sweep = createSweepActivities({
      db: stack.db,
      clock: { now: () => new Date(Date.now() + 60_000) },
      temporal: stack.engine,
      handoverMaxInFlight: TEST_HANDOVER_MAX_IN_FLIGHT,
    });
    await sweep.sweepHandovers({ olderThanMs: 30_000, limit: 1000 });
    assert.equal(await stack.waitForStatus(purchaseRow.id, FINAL_STATUSES), 'matched');
    assert.equal(await stack.waitForStatus(refundRow.id, FINAL_STATUSES), 'matched');
    // Clawbacks are booked against the purchase they reverse; reward-detail shows them on both.
    assert.deepEqual(
      await postings(purchaseRow.id),
      [
        ['earn_cashback', 400],
        ['clawback_cashback', 100],
      ],
      'a quarter refunded: a quarter of 400',
    );
    assert.equal((await detail(refundRow.id)).clawedBackAmountMinor, 100);
  });

  it('claws back no more than was earned when a refund is larger than its purchase', async () => {
    const purchase = settledEvent(card, { amount: 3_000, merchantId: merchant.id });
    await send('/api/v1/incoming-txn', purchase);
    const txn = await stored('settled', purchase.id);
    assert.equal(await stack.waitForStatus(txn.id, FINAL_STATUSES), 'matched');
    const refund = settledEvent(card, {
      state: 'refunded',
      amount: 5_000,
      relatedTransactionId: purchase.id,
      merchantId: merchant.id,
    });
    await send('/api/v1/incoming-txn', refund);
    const refundRow = await stored('settled', refund.id);
    assert.equal(await stack.waitForStatus(refundRow.id, FINAL_STATUSES), 'matched');
    assert.deepEqual(await postings(txn.id), [
      ['earn_cashback', 150],
      ['clawback_cashback', 150],
    ]);
    const final = await detail(txn.id);
    assert.deepEqual([final.status, final.earnedAmountMinor, final.clawedBackAmountMinor], ['reversed', 150, 150]);
    // A second over-refund finds nothing left to take.
    const again = settledEvent(card, {
      state: 'refunded',
      amount: 1_000,
      relatedTransactionId: purchase.id,
      merchantId: merchant.id,
    });
    await send('/api/v1/incoming-txn', again);
    const againRow = await stored('settled', again.id);
    await stack.waitForStatus(againRow.id, FINAL_STATUSES);
    assert.deepEqual(await postings(txn.id), [
      ['earn_cashback', 150],
      ['clawback_cashback', 150],
    ]);
    assert.equal((await detail(againRow.id)).clawedBackAmountMinor, 0);
  });
});
