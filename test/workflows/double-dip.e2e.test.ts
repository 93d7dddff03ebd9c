// The double dip ("Refunded but Rewarded": a refund that leaves the cardholder the reward of the
// purchase it undoes) end to end, on sandbox issuers, through the real API, hand-over, worker,
// webhook relay, PostgreSQL and Temporal dev server: a refund before and after its settlement is
// processed, partial refunds that add up to the whole, several settlements of one authorization
// then refunds, a refund inside the return window (nothing payable was paid; it comes back from
// what is on hold), a refund after payout (owed, repaid by the next purchase, the rest written
// off) and branded balance spent before its purchase was refunded. Each case ends with the group
// keeping exactly what the rules give for its purchases net of refunds (plus its adjustments),
// the summary's identities, a healthy ledger, and every webhook it received verified with the
// standardwebhooks library an issuer would use.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { FINAL_STATUSES, startStack, type Stack } from '../helpers/stack';
import { assertError, type TestIssuer } from '../helpers/app';
import { authEvent, settledEvent, storedEvent, type CardRef } from '../helpers/events';
import { walkPages } from '../helpers/catalogue';
import { activate, groupWithCard, issuerWith, merchantWithOffer } from '../helpers/scenario';
import { assertLedgerHealthy } from '../helpers/ledger';
import { configureEndpoint, startReceiver, waitFor, type Receiver } from '../helpers/webhooks';
import { brokenIdentities } from '../../api/balances/identities';

interface Delivered {
  webhookId: string;
  type: string;
  data: any;
}

/** A purchase as the rules see it: its amount and what refunds took of it so far. */
interface Purchase {
  externalId: string;
  id: string;
  merchantId: string;
  amount: number;
  refunded: number;
}

/** One sandbox issuer (its own clock and payouts), one group, and a receiver for its webhooks. */
interface Case {
  issuer: TestIssuer;
  group: any;
  card: CardRef;
  receiver: Receiver;
  secret: string;
  purchases: Purchase[];
  verified: Delivered[];
}

describe('the double dip: a group keeps what the rules give for its purchases net of refunds (end to end)', function () {
  this.timeout(300_000);
  let stack: Stack;
  /** 5% cashback and 3% branded balance, spendable after 3 days (the issuer's default 30-day hold). */
  let both: any;
  /** 5% cashback only. */
  let cashbackOnly: any;
  const cases: Case[] = [];

  before(async () => {
    stack = await startStack();
    ({ merchant: both } = await merchantWithOffer(stack.app, {
      brandedBalance: { availabilityDelayDays: 3 },
      offer: { cashbackRateBps: 500, brandedRateBps: 300 },
    }));
    ({ merchant: cashbackOnly } = await merchantWithOffer(stack.app, { offer: { cashbackRateBps: 500 } }));
  });
  after(async () => {
    await stack?.stop();
    for (const c of cases) await c.receiver.close();
  });

  async function newCase(): Promise<Case> {
    const issuer = await issuerWith(stack.app, { environment: 'sandbox' });
    const { group, card } = await groupWithCard(issuer);
    for (const merchant of [both, cashbackOnly]) await activate(issuer, group.id, merchant.id);
    const receiver = await startReceiver();
    const secret = await configureEndpoint(issuer, receiver.url);
    const c: Case = { issuer, group, card, receiver, secret, purchases: [], verified: [] };
    cases.push(c);
    return c;
  }

  /** The issuer's clock (the sandbox clock moves it): events are dated on it, as an issuer's would be. */
  async function issuerNow(c: Case): Promise<string> {
    const res = await c.issuer.call('GET', '/api/v2/sandbox/clock');
    assert.equal(res.status, 200, res.text);
    return res.body.now;
  }

  async function advance(c: Case, body: { days?: number; hours?: number }): Promise<void> {
    const res = await c.issuer.call('POST', '/api/v2/sandbox/clock/advance', body);
    assert.equal(res.status, 200, res.text);
  }

  const stored = (c: Case, externalId: string) => storedEvent(stack.db, c.issuer.id, 'settled', externalId);

  async function ingest(c: Case, events: object | object[]): Promise<void> {
    const res = await c.issuer.call('POST', '/api/v1/incoming-txn', events);
    assert.equal(res.status, 204, res.text);
  }

  /** A settled purchase dated on the issuer's clock, as stored (not yet processed). */
  async function purchaseEvent(c: Case, merchant: any, amount: number, extra: Record<string, unknown> = {}) {
    const at = await issuerNow(c);
    return settledEvent(c.card, { amount, merchantId: merchant.id, createdAt: at, settledAt: at, ...extra });
  }

  /** Sends a purchase and waits until its settlement is processed; `expected` is its final status. */
  async function purchase(
    c: Case,
    merchant: any,
    amount: number,
    extra: Record<string, unknown> = {},
    expected = 'matched',
  ): Promise<Purchase> {
    const event = await purchaseEvent(c, merchant, amount, extra);
    await ingest(c, event);
    const row = await stored(c, event.id);
    assert.equal(await stack.waitForStatus(row.id, FINAL_STATUSES), expected);
    const p: Purchase = { externalId: event.id, id: row.id, merchantId: merchant.id, amount, refunded: 0 };
    c.purchases.push(p);
    return p;
  }

  async function refundEvent(c: Case, p: Purchase, amount: number) {
    const at = await issuerNow(c);
    return settledEvent(c.card, {
      state: 'refunded',
      amount,
      relatedTransactionId: p.externalId,
      merchantId: p.merchantId,
      createdAt: at,
      settledAt: at,
    });
  }

  /** Refunds `amount` of a purchase and waits until its clawback is processed; returns the refund's id. */
  async function refund(c: Case, p: Purchase, amount: number, expected = 'matched'): Promise<string> {
    const event = await refundEvent(c, p, amount);
    await ingest(c, event);
    const row = await stored(c, event.id);
    assert.equal(await stack.waitForStatus(row.id, FINAL_STATUSES), expected);
    p.refunded += amount;
    return row.id;
  }

  const summary = async (c: Case) => {
    const res = await c.issuer.call('GET', `/api/v2/chg/${c.group.id}/rewards/summary`);
    assert.equal(res.status, 200, res.text);
    return res.body;
  };
  const cashback = async (c: Case) => {
    const s = (await summary(c)).cashback;
    return {
      balance: s.balanceMinor,
      onHold: s.onHoldMinor,
      payable: s.payableMinor,
      paidOut: s.paidOutMinor,
      owed: s.owedMinor,
    };
  };
  const detail = async (c: Case, txnId: string) =>
    (await c.issuer.call('GET', `/api/v2/chg/${c.group.id}/transaction/${txnId}/reward-detail`)).body;

  /** A payout run limited to the case's group, followed to its end. */
  async function payoutRun(c: Case): Promise<any> {
    const res = await stack.app.request('POST', '/api/v2/payouts', {
      token: c.issuer.token,
      body: { chgIds: [c.group.id] },
      headers: { 'Idempotency-Key': `run-${randomUUID()}` },
    });
    assert.equal(res.status, 202, res.text);
    return waitFor(`payout ${res.body.id} to finish`, async () => {
      const run = (await c.issuer.call('GET', `/api/v2/payouts/${res.body.id}`)).body;
      return run.status === 'processing' ? undefined : run;
    });
  }

  function payGroup(c: Case, body: Record<string, unknown> = {}) {
    return stack.app.request('POST', `/api/v2/chg/${c.group.id}/payouts`, {
      token: c.issuer.token,
      body,
      headers: { 'Idempotency-Key': `pay-${randomUUID()}` },
    });
  }

  /** Every request the case's receiver got, verified as an issuer verifies it, as first seen. */
  function delivered(c: Case): Delivered[] {
    for (const r of c.receiver.requests.slice(c.verified.length))
      c.verified.push(new Webhook(c.secret).verify(r.body, r.headers as Record<string, string>) as Delivered);
    return c.verified;
  }

  /** Waits for the one webhook of a type (and match); fails on a second one of the same fact. */
  async function received(c: Case, type: string, match: (data: any) => boolean = () => true): Promise<any> {
    return waitFor(`${type} for ${c.issuer.id}`, async () => {
      const found = delivered(c).filter((d) => d.type === type && match(d.data));
      const ids = new Set(found.map((d) => d.webhookId));
      assert.ok(ids.size <= 1, `more than one ${type}: ${[...ids].join(', ')}`);
      return found[0]?.data;
    });
  }

  /**
   * How every case ends. The rules: each purchase keeps, per component (cashback, branded), what it
   * earned less floor(earned x min(amount, refunded) / amount). The group's rewards net of
   * clawbacks are exactly that; its whole position (cashback held, paid out, less what it owes, and
   * its branded balance however used) is that plus its adjustments. The summary keeps its
   * identities, the ledger is healthy, and the issuer's trial balance is zero.
   */
  async function assertKeptByTheRules(c: Case): Promise<void> {
    const activity = await walkPages(c.issuer, `/api/v2/chg/${c.group.id}/rewards/activity`, 200);
    let rules = 0;
    for (const p of c.purchases) {
      for (const type of ['cashback_earned', 'branded_earned']) {
        const earned = activity
          .filter((row) => row.transactionId === p.id && row.type === type)
          .reduce((sum, row) => sum + row.amountMinor, 0);
        rules += earned - Math.floor((earned * Math.min(p.amount, p.refunded)) / p.amount);
      }
    }
    const s = await summary(c);
    assert.deepEqual(brokenIdentities(s), []);
    const { cashback: cb, brandedBalance: b } = s;
    assert.equal(
      cb.earnedMinor - cb.clawedBackMinor + b.earnedMinor - b.clawedBackMinor,
      rules,
      'kept as the rules give',
    );
    const position =
      cb.balanceMinor +
      cb.paidOutMinor -
      cb.owedMinor +
      b.availableMinor +
      b.notYetAvailableMinor +
      b.spentMinor +
      b.expiredMinor;
    assert.equal(
      position,
      rules + cb.adjustedMinor + b.adjustedMinor,
      'the group holds, was paid or owes nothing else',
    );
    await assertLedgerHealthy(stack.db, c.issuer.id);
    const trial = await stack.app.operator('GET', `/admin/v1/ledger/trial-balance?issuerId=${c.issuer.id}`);
    assert.equal(trial.status, 200, trial.text);
    assert.equal(trial.body.totalMinor, 0);
    // Every request received so far verifies (and matched the published contract: the receiver).
    assert.equal(delivered(c).length, c.receiver.requests.length);
  }

  it('claws back a refund that arrives before its settlement is processed, once the purchase settles', async () => {
    const c = await newCase();
    // No worker runs: the purchase and its refund are both handed over to the purchase's run, in the
    // order they arrived, and neither is processed until a worker returns.
    await stack.stopWorker();
    let workerBack = false;
    try {
      const event = await purchaseEvent(c, both, 8_000);
      await ingest(c, event);
      const row = await stored(c, event.id);
      const p: Purchase = { externalId: event.id, id: row.id, merchantId: both.id, amount: 8_000, refunded: 0 };
      c.purchases.push(p);
      const refundBody = await refundEvent(c, p, 2_000);
      await ingest(c, refundBody);
      const refundRow = await stored(c, refundBody.id);
      assert.equal(refundRow.workflowId, row.workflowId);
      assert.deepEqual([(await stored(c, event.id)).rewardStatus, refundRow.rewardStatus], ['pending', 'pending']);
      assert.equal(await stack.db.rewardEvent.count({ where: { issuerId: c.issuer.id } }), 0);
      await stack.startWorker();
      workerBack = true;
      assert.equal(await stack.waitForStatus(row.id, FINAL_STATUSES), 'matched');
      assert.equal(await stack.waitForStatus(refundRow.id, FINAL_STATUSES), 'matched');
      await afterEarlyRefund(c, p, row.id, refundRow.id);
    } finally {
      if (!workerBack) await stack.startWorker();
    }
  });

  /** The early refund took back a quarter of what the purchase earned, once it settled. */
  async function afterEarlyRefund(c: Case, p: Purchase, purchaseId: string, refundId: string): Promise<void> {
    p.refunded += 2_000;
    // 5% and 3% of 8,000 earned; a quarter of each comes back.
    const clawed = await received(c, 'reward_clawed_back', (d) => d.refundTransactionId === refundId);
    assert.deepEqual(
      [clawed.transactionId, clawed.cashbackAmountMinor, clawed.brandedAmountMinor, clawed.owedMinor],
      [purchaseId, 100, 60, 0],
    );
    const d = await detail(c, purchaseId);
    assert.deepEqual([d.status, d.earnedAmountMinor, d.clawedBackAmountMinor], ['matched', 640, 160]);
    assert.deepEqual(await cashback(c), { balance: 300, onHold: 300, payable: 0, paidOut: 0, owed: 0 });
    await assertKeptByTheRules(c);
  }

  it('claws back everything a purchase earned when it is refunded in full after its settlement', async () => {
    const c = await newCase();
    const p = await purchase(c, both, 10_000);
    const settled = await received(c, 'qualified_settlement', (d) => d.transactionId === p.id);
    assert.deepEqual([settled.cashbackAmountMinor, settled.brandedAmountMinor], [500, 300]);
    const refundId = await refund(c, p, 10_000);
    const clawed = await received(c, 'reward_clawed_back', (d) => d.refundTransactionId === refundId);
    assert.deepEqual([clawed.cashbackAmountMinor, clawed.brandedAmountMinor, clawed.owedMinor], [500, 300, 0]);
    const d = await detail(c, p.id);
    assert.deepEqual([d.status, d.earnedAmountMinor, d.clawedBackAmountMinor], ['reversed', 800, 800]);
    assert.deepEqual(await cashback(c), { balance: 0, onHold: 0, payable: 0, paidOut: 0, owed: 0 });
    await assertKeptByTheRules(c);
  });

  it('takes back all of it, and no more, with partial refunds that add up to the whole purchase', async () => {
    const c = await newCase();
    // 9,999 earns floor(499.95) = 499 cashback and floor(299.97) = 299 branded.
    const p = await purchase(c, both, 9_999);
    await refund(c, p, 3_333);
    assert.equal((await detail(c, p.id)).clawedBackAmountMinor, 166 + 99);
    // The other two thirds in one batch: the purchase's run claws them back one after the other.
    const rest = [await refundEvent(c, p, 3_333), await refundEvent(c, p, 3_333)];
    await ingest(c, rest);
    for (const r of rest)
      assert.equal(await stack.waitForStatus((await stored(c, r.id)).id, FINAL_STATUSES), 'matched');
    p.refunded += 6_666;
    const d = await detail(c, p.id);
    assert.deepEqual([d.status, d.earnedAmountMinor, d.clawedBackAmountMinor], ['reversed', 798, 798]);
    const clawbacks = await Promise.all(
      rest.map(async (r) => {
        const id = (await stored(c, r.id)).id;
        return received(c, 'reward_clawed_back', (data) => data.refundTransactionId === id);
      }),
    );
    assert.deepEqual(
      clawbacks.map((x) => x.cashbackAmountMinor + x.brandedAmountMinor).sort(),
      [166 + 100, 167 + 100].sort(),
    );
    assert.deepEqual(await cashback(c), { balance: 0, onHold: 0, payable: 0, paidOut: 0, owed: 0 });
    await assertKeptByTheRules(c);
  });

  it('claws back each settlement of one authorization on its own amount', async () => {
    const c = await newCase();
    const at = await issuerNow(c);
    const auth = authEvent(c.card, { amount: 10_000, merchantId: both.id, createdAt: at });
    assert.equal((await c.issuer.call('POST', '/api/v1/incoming-auth', auth)).status, 204);
    const authRow = await storedEvent(stack.db, c.issuer.id, 'auth', auth.id);
    assert.equal(await stack.waitForStatus(authRow.id, ['previewed', 'not_matched', 'unknown']), 'previewed');
    // A split shipment: 6,000 then 4,000, each earning on its own amount.
    const first = await purchase(c, both, 6_000, { authorizationId: auth.id });
    const second = await purchase(c, both, 4_000, { authorizationId: auth.id });
    assert.equal((await stored(c, first.externalId)).workflowId, authRow.workflowId);
    assert.equal((await detail(c, first.id)).earnedAmountMinor, 300 + 180);
    assert.equal((await detail(c, second.id)).earnedAmountMinor, 200 + 120);
    // Half of the first is returned, and all of the second.
    const half = await refund(c, first, 3_000);
    const all = await refund(c, second, 4_000);
    const halfClawed = await received(c, 'reward_clawed_back', (d) => d.refundTransactionId === half);
    const allClawed = await received(c, 'reward_clawed_back', (d) => d.refundTransactionId === all);
    assert.deepEqual(
      [halfClawed.transactionId, halfClawed.cashbackAmountMinor, halfClawed.brandedAmountMinor],
      [first.id, 150, 90],
    );
    assert.deepEqual(
      [allClawed.transactionId, allClawed.cashbackAmountMinor, allClawed.brandedAmountMinor],
      [second.id, 200, 120],
    );
    assert.equal((await detail(c, first.id)).status, 'matched');
    assert.equal((await detail(c, second.id)).status, 'reversed');
    assert.deepEqual(await cashback(c), { balance: 150, onHold: 150, payable: 0, paidOut: 0, owed: 0 });
    await assertKeptByTheRules(c);
  });

  it('pays nothing on hold, and a refund inside the return window takes back from what is on hold', async () => {
    const c = await newCase();
    const p = await purchase(c, cashbackOnly, 10_000);
    assert.deepEqual(await cashback(c), { balance: 500, onHold: 500, payable: 0, paidOut: 0, owed: 0 });
    // Inside the window nothing is payable: a single group's payout is refused, a run pays nobody.
    const refused = await payGroup(c);
    assertError(refused, 409, 'insufficient_balance');
    assert.equal(refused.body.details.availableMinor, 0);
    const empty = await payoutRun(c);
    assert.deepEqual([empty.status, empty.groupCount, empty.totalMinor], ['completed', 0, 0]);

    await advance(c, { days: 10 });
    const refundId = await refund(c, p, 4_000);
    const clawed = await received(c, 'reward_clawed_back', (d) => d.refundTransactionId === refundId);
    assert.deepEqual([clawed.cashbackAmountMinor, clawed.owedMinor], [200, 0]);
    assert.deepEqual(await cashback(c), { balance: 300, onHold: 300, payable: 0, paidOut: 0, owed: 0 });
    const hold = await stack.db.cashbackHold.findFirstOrThrow({ where: { transactionId: p.id } });
    assert.equal(hold.remainingMinor, 300n, 'the hold shrank by what the refund took back');

    // Past the 30 days, what is left is payable, and a run pays exactly that.
    await advance(c, { days: 20, hours: 1 });
    assert.deepEqual(await cashback(c), { balance: 300, onHold: 0, payable: 300, paidOut: 0, owed: 0 });
    const run = await payoutRun(c);
    assert.deepEqual([run.status, run.groupCount, run.totalMinor], ['completed', 1, 300]);
    const paid = await received(c, 'cashback_paid_out', (d) => d.payoutId === run.id);
    assert.deepEqual([paid.chgId, paid.amountMinor], [c.group.id, 300]);
    assert.deepEqual(await cashback(c), { balance: 0, onHold: 0, payable: 0, paidOut: 300, owed: 0 });
    await assertKeptByTheRules(c);
  });

  it('records a refund after payout as owed, repays it from the next purchase, and writes off the rest', async () => {
    const c = await newCase();
    const first = await purchase(c, cashbackOnly, 10_000);
    await advance(c, { days: 30, hours: 1 });
    assert.deepEqual(await cashback(c), { balance: 500, onHold: 0, payable: 500, paidOut: 0, owed: 0 });
    const run = await payoutRun(c);
    assert.deepEqual([run.status, run.groupCount, run.totalMinor], ['completed', 1, 500]);
    const paid = await received(c, 'cashback_paid_out', (d) => d.payoutId === run.id);
    assert.deepEqual([paid.chgId, paid.amountMinor], [c.group.id, 500]);
    const completed = await received(c, 'payout_completed', (d) => d.payoutId === run.id);
    assert.deepEqual([completed.groupCount, completed.totalMinor], [1, 500]);

    // The whole purchase comes back after its cashback left: the group owes all of it.
    const refundId = await refund(c, first, 10_000);
    const clawed = await received(c, 'reward_clawed_back', (d) => d.refundTransactionId === refundId);
    assert.deepEqual([clawed.transactionId, clawed.cashbackAmountMinor, clawed.owedMinor], [first.id, 500, 500]);
    assert.deepEqual(await cashback(c), { balance: 0, onHold: 0, payable: 0, paidOut: 500, owed: 500 });
    assert.equal((await detail(c, first.id)).status, 'reversed');

    // The next purchase's 200 repays what is owed before the group holds any of it.
    const next = await purchase(c, cashbackOnly, 4_000);
    assert.deepEqual(await cashback(c), { balance: 0, onHold: 0, payable: 0, paidOut: 500, owed: 300 });
    const feed = (await c.issuer.call('GET', `/api/v2/chg/${c.group.id}/rewards/activity`)).body.data;
    const ofNext = feed
      .filter((row: any) => row.transactionId === next.id)
      .map((row: any) => [row.type, row.amountMinor]);
    assert.deepEqual(ofNext.sort(), [
      ['cashback_earned', 200],
      ['cashback_owed_repaid', -200],
    ]);
    assertError(await payGroup(c), 409, 'insufficient_balance');

    // The issuer forgives the rest; a write-off beyond it is refused.
    const writeOff = (amountMinor: number) =>
      stack.app.request('POST', `/api/v2/chg/${c.group.id}/adjustments`, {
        token: c.issuer.token,
        body: { balanceType: 'cashback', amountMinor, reasonCode: 'write_off', note: 'refund after payout' },
        headers: { 'Idempotency-Key': `writeoff-${randomUUID()}` },
      });
    assertError(await writeOff(301), 409, 'insufficient_balance');
    const forgiven = await writeOff(300);
    assert.equal(forgiven.status, 201, forgiven.text);
    const adjusted = await received(c, 'reward_adjusted', (d) => d.adjustmentId === forgiven.body.id);
    assert.deepEqual([adjusted.reasonCode, adjusted.amountMinor, adjusted.balanceType], ['write_off', 300, 'cashback']);
    assert.deepEqual(await cashback(c), { balance: 0, onHold: 0, payable: 0, paidOut: 500, owed: 0 });
    const s = (await summary(c)).cashback;
    assert.deepEqual([s.earnedMinor, s.clawedBackMinor, s.adjustedMinor], [700, 500, 300]);

    // Past the next window nothing more is payable: the group got 500, kept 200 by the rules, and
    // the issuer gave the 300 it forgave.
    await advance(c, { days: 31 });
    assert.deepEqual(await cashback(c), { balance: 0, onHold: 0, payable: 0, paidOut: 500, owed: 0 });
    await assertKeptByTheRules(c);
  });

  it('takes back spent branded balance from cashback, and owes what cashback cannot cover, when its purchase is refunded', async () => {
    const c = await newCase();
    // 200 cashback from another merchant, then 500 cashback and a 300 grant.
    await purchase(c, cashbackOnly, 4_000);
    const earning = await purchase(c, both, 10_000);
    await advance(c, { days: 3, hours: 1 });
    // 250 of the grant is spent on a purchase of 250, which earns nothing on what is left (0).
    const spending = await purchase(c, both, 250);
    const spent = await detail(c, spending.id);
    assert.deepEqual([spent.spentAmountMinor, spent.earnedAmountMinor], [250, 0]);
    assert.deepEqual(await cashback(c), { balance: 700, onHold: 700, payable: 0, paidOut: 0, owed: 0 });

    // The earning purchase comes back in full: its 500 cashback, the 50 left of its grant, and the
    // 250 spent: 200 from the group's other cashback, the last 50 owed.
    const refundId = await refund(c, earning, 10_000);
    const clawed = await received(c, 'reward_clawed_back', (d) => d.refundTransactionId === refundId);
    assert.deepEqual(
      [clawed.cashbackAmountMinor, clawed.brandedAmountMinor, clawed.owedMinor],
      [500 + 200 + 50, 50, 50],
    );
    assert.equal((await detail(c, earning.id)).status, 'reversed');
    assert.deepEqual(await cashback(c), { balance: 0, onHold: 0, payable: 0, paidOut: 0, owed: 50 });
    const branded = (await summary(c)).brandedBalance;
    assert.deepEqual(
      [branded.earnedMinor, branded.spentMinor, branded.clawedBackMinor, branded.availableMinor],
      [300, 250, 50, 0],
    );
    await assertKeptByTheRules(c);
  });

  /** A purchase whose descriptor no merchant's rules match: it earns nothing until a claim names the merchant. */
  async function unmatchedPurchase(c: Case, amount: number): Promise<Purchase> {
    const p = await purchase(
      c,
      cashbackOnly,
      amount,
      { merchantId: undefined, merchantDescriptor: `NOBODY ${randomUUID()}` },
      'not_matched',
    );
    return p;
  }

  async function fileClaim(c: Case, body: Record<string, unknown>, key = `claim-${randomUUID()}`) {
    return stack.app.request('POST', `/api/v2/chg/${c.group.id}/claims`, {
      token: c.issuer.token,
      body: { reason: 'missing_reward', ...body },
      headers: { 'Idempotency-Key': key },
    });
  }

  async function claimDecided(c: Case, claimId: string): Promise<any> {
    return waitFor(`claim ${claimId} decided`, async () => {
      const res = await c.issuer.call('GET', `/api/v2/chg/${c.group.id}/claims/${claimId}`);
      return res.body.status === 'open' ? undefined : res.body;
    });
  }

  /** A claim that the purchase's reward is missing at `merchant`, reviewed and approved by an operator. */
  async function approvedClaim(c: Case, p: Purchase, merchant: any, computed: number): Promise<any> {
    const filed = await fileClaim(c, { transactionId: p.id, merchantId: merchant.id });
    assert.equal(filed.status, 202, filed.text);
    const reviewed = await claimDecided(c, filed.body.id);
    assert.equal(reviewed.status, 'needs_review', JSON.stringify(reviewed));
    assert.deepEqual(reviewed.computedReward, { cashbackMinor: computed, brandedMinor: 0 });
    const approved = await stack.app.operator('POST', `/admin/v1/claims/${filed.body.id}/approve`, {});
    assert.equal(approved.status, 200, approved.text);
    assert.equal(approved.body.status, 'approved');
    return approved.body;
  }

  it("holds an approved claim's cashback for the purchase's window and takes it all back on a full refund", async () => {
    const c = await newCase();
    const p = await unmatchedPurchase(c, 10_000);
    const claim = await approvedClaim(c, p, cashbackOnly, 500);
    assert.equal(claim.adjustmentIds.length, 1);
    // The purchase's own reward: on hold, so the same day's payout finds nothing payable.
    assert.deepEqual(await cashback(c), { balance: 500, onHold: 500, payable: 0, paidOut: 0, owed: 0 });
    assertError(await payGroup(c), 409, 'insufficient_balance');
    const refundId = await refund(c, p, 10_000);
    const clawed = await received(c, 'reward_clawed_back', (d) => d.refundTransactionId === refundId);
    assert.deepEqual([clawed.merchantId, clawed.cashbackAmountMinor, clawed.owedMinor], [cashbackOnly.id, 500, 0]);
    assert.deepEqual(await cashback(c), { balance: 0, onHold: 0, payable: 0, paidOut: 0, owed: 0 });
    const s = (await summary(c)).cashback;
    assert.deepEqual([s.earnedMinor, s.adjustedMinor], [0, 0], 'the credit and its reversal cancel out');
    // Back to the issuer that funded it, never to the merchant.
    const reversal = await stack.db.ledgerTransfer.findMany({
      where: {
        issuerId: c.issuer.id,
        transactionId: p.id,
        kind: { in: ['adjust_debit_cashback', 'clawback_cashback'] },
      },
    });
    assert.deepEqual(
      reversal.map((t) => [t.kind, t.amountMinor]),
      [['adjust_debit_cashback', 500n]],
    );
    await advance(c, { days: 31 });
    assert.deepEqual(await cashback(c), { balance: 0, onHold: 0, payable: 0, paidOut: 0, owed: 0 });
    await assertKeptByTheRules(c);
  });

  it('owes back a claim paid out before its purchase was refunded, and repays it from later cashback', async () => {
    const c = await newCase();
    const p = await unmatchedPurchase(c, 10_000);
    await approvedClaim(c, p, cashbackOnly, 500);
    await advance(c, { days: 30, hours: 1 });
    assert.deepEqual(await cashback(c), { balance: 500, onHold: 0, payable: 500, paidOut: 0, owed: 0 });
    const paid = await payGroup(c);
    assert.equal(paid.status, 201, paid.text);
    const refundId = await refund(c, p, 10_000);
    const clawed = await received(c, 'reward_clawed_back', (d) => d.refundTransactionId === refundId);
    assert.deepEqual([clawed.cashbackAmountMinor, clawed.owedMinor], [500, 500]);
    assert.deepEqual(await cashback(c), { balance: 0, onHold: 0, payable: 0, paidOut: 500, owed: 500 });
    // A goodwill credit repays what the group owes before any of it is payable.
    const goodwill = await stack.app.request('POST', `/api/v2/chg/${c.group.id}/adjustments`, {
      token: c.issuer.token,
      body: { balanceType: 'cashback', amountMinor: 300, reasonCode: 'goodwill' },
      headers: { 'Idempotency-Key': `goodwill-${randomUUID()}` },
    });
    assert.equal(goodwill.status, 201, goodwill.text);
    assert.deepEqual(await cashback(c), { balance: 0, onHold: 0, payable: 0, paidOut: 500, owed: 200 });
    assertError(await payGroup(c), 409, 'insufficient_balance');
    await assertKeptByTheRules(c);
  });

  it('credits a claim after a partial refund net of it, and the later refunds take the rest in proportion', async () => {
    const c = await newCase();
    const p = await unmatchedPurchase(c, 10_000);
    await refund(c, p, 4_000, 'not_matched');
    // 5 % of 10,000 is 500; the 4,000 refunded would have taken 200 of it.
    await approvedClaim(c, p, cashbackOnly, 300);
    assert.deepEqual(await cashback(c), { balance: 300, onHold: 300, payable: 0, paidOut: 0, owed: 0 });
    await refund(c, p, 3_000);
    assert.deepEqual(await cashback(c), { balance: 150, onHold: 150, payable: 0, paidOut: 0, owed: 0 });
    await refund(c, p, 3_000);
    assert.deepEqual(await cashback(c), { balance: 0, onHold: 0, payable: 0, paidOut: 0, owed: 0 });
    await assertKeptByTheRules(c);
  });

  it('rejects a claim for a purchase refunded in full, and never restores a correction debit', async () => {
    const c = await newCase();
    const returned = await purchase(c, cashbackOnly, 10_000);
    await refund(c, returned, 10_000);
    const filed = await fileClaim(c, { transactionId: returned.id });
    assert.equal(filed.status, 202, filed.text);
    const rejected = await claimDecided(c, filed.body.id);
    assert.deepEqual([rejected.status, rejected.reasonCode], ['rejected', 'purchase_refunded']);
    assert.deepEqual(
      [rejected.evidence.refundedMinor, rejected.evidence.keptCashbackMinor, rejected.evidence.refunds.length],
      [10_000, 0, 1],
    );

    const kept = await purchase(c, cashbackOnly, 10_000);
    const correction = await stack.app.request('POST', `/api/v2/chg/${c.group.id}/adjustments`, {
      token: c.issuer.token,
      body: { balanceType: 'cashback', amountMinor: -200, reasonCode: 'correction', transactionId: kept.id },
      headers: { 'Idempotency-Key': `correction-${randomUUID()}` },
    });
    assert.equal(correction.status, 201, correction.text);
    const wrong = await fileClaim(c, { transactionId: kept.id, reason: 'wrong_amount' });
    const decided = await claimDecided(c, wrong.body.id);
    assert.deepEqual([decided.status, decided.reasonCode], ['rejected', 'already_rewarded']);
    assert.equal(decided.evidence.keptCashbackMinor, 500);
    await assertKeptByTheRules(c);
  });

  it('answers a claim filed again under its Idempotency-Key with the same claim, after the first was resolved', async () => {
    const c = await newCase();
    const returned = await purchase(c, cashbackOnly, 4_000);
    await refund(c, returned, 4_000);
    const key = `claim-${randomUUID()}`;
    const first = await fileClaim(c, { transactionId: returned.id }, key);
    assert.equal(first.status, 202, first.text);
    assert.equal((await claimDecided(c, first.body.id)).status, 'rejected');
    // The API that filed it dies before it stores its answer: the key's record of the answer is
    // gone (its lease runs out), and the retry runs the route again.
    await stack.db.idempotencyKey.deleteMany({ where: { key } });
    const again = await fileClaim(c, { transactionId: returned.id }, key);
    assert.equal(again.status, 202, again.text);
    assert.equal(again.body.id, first.body.id, 'the same claim, not a second one');
    assert.equal(await stack.db.claim.count({ where: { issuerId: c.issuer.id } }), 1);
    await stack.db.idempotencyKey.deleteMany({ where: { key } });
    const other = await fileClaim(c, { transactionId: returned.id, note: 'another request' }, key);
    assertError(other, 409, 'idempotency_key_reused');
    await assertKeptByTheRules(c);
  });
});
