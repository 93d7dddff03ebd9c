// Cashback on hold for the return window, on the time-skipping Temporal test server and the real
// PostgreSQL, for a production issuer on real (skipped) time: the real worker, API and hand-over.
// A purchase's cashback is on hold for the issuer's default 30 days, counted from its own date:
// not payable after 29 days, payable after 30, and a payout run (its workflow on the test server)
// pays it then and not before. An offer's returnPeriodDays overrides the issuer's: 0 makes the
// cashback payable at once, 60 holds it twice as long. Purchases are dated on the test server's
// clock, which the API and the worker both run on.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { assertError, type TestIssuer } from '../helpers/app';
import { settledEvent, storedEvent, type CardRef } from '../helpers/events';
import { assertLedgerHealthy } from '../helpers/ledger';
import { waitFor } from '../helpers/webhooks';
import { activatedMerchant, groupWithCard, issuerWith } from '../helpers/scenario';
import { startTimeSkippingStack, type TimeSkippingStack } from '../helpers/time-skipping';

const DAY_MS = 86_400_000;

describe('cashback on hold for the return window (time-skipping, production issuer)', function () {
  this.timeout(180_000);
  let stack: TimeSkippingStack;
  let issuer: TestIssuer;
  let group: any;
  let card: CardRef;

  before(async () => {
    stack = await startTimeSkippingStack();
    issuer = await issuerWith(stack.app, { environment: 'production' });
    ({ group, card } = await groupWithCard(issuer));
  });
  after(() => stack?.stop());

  /**
   * A merchant the issuer's production events reach by its acquirer id, with a 5% cashback offer
   * (and the offer's return window, when given), activated for the group.
   */
  async function merchantWith(returnPeriodDays?: number): Promise<string> {
    const acquirerMerchantId = `acq-${randomUUID()}`;
    await activatedMerchant(stack.app, issuer, group.id, {
      matchRules: { acquirerMerchantIds: [acquirerMerchantId] },
      offer: { cashbackRateBps: 500, ...(returnPeriodDays === undefined ? {} : { returnPeriodDays }) },
    });
    return acquirerMerchantId;
  }

  /** A purchase dated now on the test server's clock, processed; returns its id. */
  async function purchase(acquirerMerchantId: string, amount: number): Promise<string> {
    const createdAt = stack.now().toISOString();
    const event = settledEvent(card, { amount, merchantId: acquirerMerchantId, createdAt, settledAt: createdAt });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', event)).status, 204);
    const row = await storedEvent(stack.db, issuer.id, 'settled', event.id);
    const status = await waitFor(`transaction ${row.id} to be processed`, async () => {
      const s = (await stack.db.ingestedEvent.findUniqueOrThrow({ where: { id: row.id } })).rewardStatus;
      return ['matched', 'not_matched', 'unknown'].includes(s) ? s : undefined;
    });
    assert.equal(status, 'matched');
    return row.id;
  }

  async function cashback() {
    const res = await issuer.call('GET', `/api/v2/chg/${group.id}/rewards/summary`);
    assert.equal(res.status, 200, res.text);
    const c = res.body.cashback;
    return { onHold: c.onHoldMinor, payable: c.payableMinor, paidOut: c.paidOutMinor, balance: c.balanceMinor };
  }

  /**
   * A payout run over the issuer's groups, polled to its end: waiting on the workflow's result
   * would let the test server skip time, which must move only by skipTo.
   */
  async function payoutRun(): Promise<{ status: string; groupCount: number; totalMinor: number }> {
    const res = await stack.app.request('POST', '/api/v2/payouts', {
      token: issuer.token,
      body: {},
      headers: { 'Idempotency-Key': `run-${randomUUID()}` },
    });
    assert.equal(res.status, 202, res.text);
    return waitFor(`payout ${res.body.id}`, async () => {
      const run = (await issuer.call('GET', `/api/v2/payouts/${res.body.id}`)).body;
      return run.status === 'processing' ? undefined : run;
    });
  }

  /** How many groups a completed run paid, and how much. */
  async function paidBy(run: ReturnType<typeof payoutRun>): Promise<[number, number]> {
    const { status, groupCount, totalMinor } = await run;
    assert.equal(status, 'completed');
    return [groupCount, totalMinor];
  }

  it('holds cashback 30 days by default, 0 or 60 where the offer says, and pays each once it is payable', async () => {
    const byDefault = await merchantWith();
    const atOnce = await merchantWith(0);
    const long = await merchantWith(60);
    const boughtAt = stack.now().getTime();
    const purchases = {
      byDefault: await purchase(byDefault, 10_000),
      atOnce: await purchase(atOnce, 4_000),
      long: await purchase(long, 6_000),
    };
    // Each hold ends its window after the purchase's own date.
    for (const [which, days] of [
      ['byDefault', 30],
      ['atOnce', 0],
      ['long', 60],
    ] as const) {
      const hold = await stack.db.cashbackHold.findFirstOrThrow({ where: { transactionId: purchases[which] } });
      assert.equal(hold.payableAt.getTime(), boughtAt + days * DAY_MS, which);
    }

    // At once: the returnPeriodDays 0 offer's 200 is payable, and a run pays only that.
    assert.deepEqual(await cashback(), { onHold: 800, payable: 200, paidOut: 0, balance: 1000 });
    assert.deepEqual(await paidBy(payoutRun()), [1, 200]);
    assert.deepEqual(await cashback(), { onHold: 800, payable: 0, paidOut: 200, balance: 800 });

    // 29 days on, the default window has not ended: nothing is payable, nothing is paid.
    await stack.skipTo(boughtAt + 29 * DAY_MS);
    assert.deepEqual(await cashback(), { onHold: 800, payable: 0, paidOut: 200, balance: 800 });
    const early = await stack.app.request('POST', `/api/v2/chg/${group.id}/payouts`, {
      token: issuer.token,
      body: {},
      headers: { 'Idempotency-Key': `early-${randomUUID()}` },
    });
    assertError(early, 409, 'insufficient_balance');
    assert.deepEqual(await paidBy(payoutRun()), [0, 0]);

    // 30 days on: the default window's 500 is payable and paid; the 60-day offer's 300 still waits.
    await stack.skipTo(boughtAt + 30 * DAY_MS);
    assert.deepEqual(await cashback(), { onHold: 300, payable: 500, paidOut: 200, balance: 800 });
    assert.deepEqual(await paidBy(payoutRun()), [1, 500]);
    assert.deepEqual(await cashback(), { onHold: 300, payable: 0, paidOut: 700, balance: 300 });

    // 59 days on it still waits; 60 days on it is payable, and paid.
    await stack.skipTo(boughtAt + 59 * DAY_MS);
    assert.deepEqual(await cashback(), { onHold: 300, payable: 0, paidOut: 700, balance: 300 });
    await stack.skipTo(boughtAt + 60 * DAY_MS);
    assert.deepEqual(await cashback(), { onHold: 0, payable: 300, paidOut: 700, balance: 300 });
    assert.deepEqual(await paidBy(payoutRun()), [1, 300]);
    assert.deepEqual(await cashback(), { onHold: 0, payable: 0, paidOut: 1000, balance: 0 });

    // Each payout paid one purchase's cashback, in the order their windows ended.
    const paidOut = await stack.db.rewardEvent.findMany({
      where: { issuerId: issuer.id, type: 'cashback_paid_out' },
      orderBy: { occurredAt: 'asc' },
    });
    assert.deepEqual(
      paidOut.map((e) => Number(e.amountMinor)),
      [-200, -500, -300],
    );
    await assertLedgerHealthy(stack.db, issuer.id);
    const trial = await stack.app.operator('GET', `/admin/v1/ledger/trial-balance?issuerId=${issuer.id}`);
    assert.equal(trial.body.totalMinor, 0);
  });
});
