// An event refused beside valid ones fails alone and changes nothing, end to end over HTTP with
// the real hand-over, Temporal and PostgreSQL: amounts in different currencies are never
// compared (a refund or settlement in another currency than the purchase or authorization it
// names is currency_mismatch), and a string PostgreSQL cannot hold fails only its own event.
import { randomUUID } from 'node:crypto';
import assert from 'node:assert/strict';
import { FINAL_STATUSES, startStack, type Stack } from '../helpers/stack';
import type { TestIssuer } from '../helpers/app';
import { authEvent, settledEvent, type CardRef } from '../helpers/events';
import { purchaseScenario } from '../helpers/scenario';
import { assertLedgerHealthy } from '../helpers/ledger';

describe('events refused alone beside valid ones', function () {
  this.timeout(120_000);
  let stack: Stack;
  let issuer: TestIssuer;
  let group: any;
  let card: CardRef;
  let merchant: any;

  before(async () => {
    stack = await startStack();
    // Cashback only: 10 %.
    ({ issuer, group, card, merchant } = await purchaseScenario(stack.app, { offer: { cashbackRateBps: 1000 } }));
  });
  after(() => stack.stop());
  afterEach(async () => {
    await assertLedgerHealthy(stack.db, issuer.id);
    const trial = await stack.app.operator('GET', '/admin/v1/ledger/trial-balance');
    assert.equal(trial.body.totalMinor, 0);
  });

  const stored = (kind: 'auth' | 'settled', externalId: string) =>
    stack.db.ingestedEvent.findUnique({
      where: { issuerId_kind_externalId: { issuerId: issuer.id, kind, externalId } },
    });
  const detail = async (txnId: string) =>
    (await issuer.call('GET', `/api/v2/chg/${group.id}/transaction/${txnId}/reward-detail`)).body;
  const settlePurchase = async (amount: number, overrides: object = {}) => {
    const purchase = settledEvent(card, { amount, merchantId: merchant.id, ...overrides });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', purchase)).status, 204);
    const row = (await stored('settled', purchase.id))!;
    assert.equal(await stack.waitForStatus(row.id, FINAL_STATUSES), 'matched');
    return { purchase, row };
  };
  const assertOneMismatch = (res: { status: number; body: any }, index: number) => {
    assert.equal(res.status, index === 0 ? 400 : 200);
    assert.equal(res.body.length, 1);
    assert.equal(res.body[0].index, index);
    assert.equal(res.body[0].error.reasonCode, 'currency_mismatch');
    assert.ok(res.body[0].error.details.errors.some((e: { path: string }) => e.path === '/currency'));
  };

  it('refuses a jpy refund of a usd purchase and leaves the purchase as it was', async () => {
    const { purchase, row } = await settlePurchase(10_000);
    const before = await detail(row.id);
    assert.equal(before.earnedAmountMinor, 1_000);
    const refund = settledEvent(card, {
      amount: 5_000,
      currency: 'jpy',
      state: 'refunded',
      relatedTransactionId: purchase.id,
      merchantId: merchant.id,
    });
    assertOneMismatch(await issuer.call('POST', '/api/v1/incoming-txn', refund), 0);
    assert.equal(await stored('settled', refund.id), null, 'nothing stored');
    // A refund in the right currency right after still claws back its share.
    const usdRefund = { ...refund, id: `${refund.id}-usd`, currency: 'usd' };
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', usdRefund)).status, 204);
    const refundRow = (await stored('settled', usdRefund.id))!;
    assert.equal(await stack.waitForStatus(refundRow.id, FINAL_STATUSES), 'matched');
    const after = await detail(row.id);
    assert.deepEqual([after.status, after.earnedAmountMinor], ['matched', before.earnedAmountMinor]);
    const clawed = await stack.db.ledgerTransfer.findMany({
      where: { transactionId: row.id, kind: 'clawback_cashback' },
    });
    assert.deepEqual(
      clawed.map((t) => Number(t.amountMinor)),
      [500],
      'only the usd refund claws back',
    );
  });

  it('refuses an eur refund of all of a usd purchase in a batch beside a valid event', async () => {
    const { purchase, row } = await settlePurchase(1_000);
    const other = settledEvent(card, { amount: 2_000, merchantId: merchant.id });
    const refund = settledEvent(card, {
      amount: 1_000,
      currency: 'eur',
      state: 'refunded',
      relatedTransactionId: purchase.id,
      merchantId: merchant.id,
    });
    assertOneMismatch(await issuer.call('POST', '/api/v1/incoming-txn', [other, refund]), 1);
    assert.equal(await stack.waitForStatus((await stored('settled', other.id))!.id, FINAL_STATUSES), 'matched');
    assert.equal((await detail(row.id)).status, 'matched', 'not reversed');
  });

  it('refuses an eur settlement of a usd authorization, then settles it in usd', async () => {
    const auth = authEvent(card, { amount: 4_000, merchantId: merchant.id });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-auth', auth)).status, 204);
    const authRow = (await stored('auth', auth.id))!;
    assert.equal(await stack.waitForStatus(authRow.id, ['previewed', 'not_matched', 'unknown']), 'previewed');
    const eur = settledEvent(card, {
      amount: 4_000,
      currency: 'eur',
      merchantId: merchant.id,
      authorizationId: auth.id,
    });
    const res = await issuer.call('POST', '/api/v1/incoming-txn', eur);
    assertOneMismatch(res, 0);
    assert.ok(res.body[0].error.details.errors.some((e: { path: string }) => e.path === '/authorizationId'));
    assert.equal(await stored('settled', eur.id), null);
    assert.equal((await stored('auth', auth.id))!.rewardStatus, 'previewed', 'the preview stands');
    const usd = { ...eur, id: `${eur.id}-usd`, currency: 'usd' };
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', usd)).status, 204);
    const usdRow = (await stored('settled', usd.id))!;
    assert.equal(await stack.waitForStatus(usdRow.id, FINAL_STATUSES), 'matched');
    assert.equal((await detail(usdRow.id)).earnedAmountMinor, 400);
  });

  it('refuses a late authorization in another currency than the settlement that named it', async () => {
    const authId = `auth-late-${randomUUID()}`;
    const { row } = await settlePurchase(3_000, { authorizationId: authId });
    const late = authEvent(card, { id: authId, amount: 3_000, currency: 'gbp', merchantId: merchant.id });
    const res = await issuer.call('POST', '/api/v1/incoming-auth', late);
    assertOneMismatch(res, 0);
    assert.ok(res.body[0].error.details.errors.some((e: { path: string }) => e.path === '/id'));
    assert.equal(await stored('auth', authId), null);
    assert.equal((await detail(row.id)).earnedAmountMinor, 300);
  });

  it('processes the valid event of a batch whose other event holds a NUL or a lone surrogate', async () => {
    for (const descriptor of ['SQ *BLUE\u0000BOTTLE', 'SQ *BLUE \ud800']) {
      const good = settledEvent(card, { amount: 2_000, merchantId: merchant.id });
      const bad = settledEvent(card, { merchantDescriptor: descriptor, merchantId: merchant.id });
      const res = await issuer.call('POST', '/api/v1/incoming-txn', [good, bad]);
      assert.equal(res.status, 200);
      assert.deepEqual(
        res.body.map((f: any) => [f.index, f.id, f.error.reasonCode]),
        [[1, bad.id, 'invalid_event']],
      );
      const row = (await stored('settled', good.id))!;
      assert.equal(await stack.waitForStatus(row.id, FINAL_STATUSES), 'matched');
      assert.equal((await detail(row.id)).earnedAmountMinor, 200);
      assert.equal(await stored('settled', bad.id), null);
    }
  });
});
