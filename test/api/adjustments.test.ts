// Adjustments over HTTP against the real database: a credit and a debit of each balance type,
// each seen in the summary, activity, merchant balance, ledger entries, export and trial
// balance; a debit beyond the balance posts nothing; the Idempotency-Key is required and posts
// once; the issuer's limit; another issuer's ids are 404; the reward_adjusted webhook record.
import assert from 'node:assert/strict';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { startTestApp, newIssuer, assertError, type TestApp, type TestIssuer } from '../helpers/app';
import { createMerchant } from '../helpers/catalogue';
import { cardOf, settledEvent } from '../helpers/events';
import { groupBody } from '../helpers/groups';
import { assertLedgerHealthy } from '../helpers/ledger';
import { adjustmentSchema } from '../../api/adjustments/schemas';
import { summarySchema } from '../../api/balances/schemas';
import { FACT_WEBHOOK_DATA_SCHEMAS } from '../../core/webhooks/fact-webhooks';

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
const valid = (schema: object, body: unknown) => assert.ok(ajv.validate(schema, body), JSON.stringify(ajv.errors));

describe('adjustments (customer service) over HTTP', () => {
  let app: TestApp;
  let issuer: TestIssuer;
  let other: TestIssuer;
  let chgId: string;
  let txnId: string;
  let merchant: any;
  let keyCount = 0;
  const nextKey = () => `adj-test-${process.pid}-${++keyCount}`;
  const base = () => `/api/v2/chg/${chgId}`;
  const post = (body: object, key: string | null = nextKey(), as: TestIssuer = issuer, group = chgId) =>
    app.request('POST', `/api/v2/chg/${group}/adjustments`, {
      token: as.token,
      body,
      headers: key === null ? {} : { 'Idempotency-Key': key },
    });
  const summary = async () => (await issuer.call('GET', `${base()}/rewards/summary`)).body;

  before(async () => {
    app = await startTestApp();
    issuer = await newIssuer(app);
    other = await newIssuer(app);
    const group = await issuer.call('POST', '/api/v2/chg', groupBody());
    assert.equal(group.status, 201, group.text);
    chgId = group.body.id;
    merchant = await createMerchant(app, {
      brandedBalance: { enabled: true, spendMinimumMinor: 0, availabilityDelayDays: 3, expiryDays: 90 },
    });
    // A purchase the adjustments can name (stored; its processing is not needed here).
    const event = settledEvent(cardOf(group.body), { merchantId: merchant.id });
    const ingest = await issuer.call('POST', '/api/v1/incoming-txn', event);
    assert.equal(ingest.status, 204, ingest.text);
    const stored = await app.db.ingestedEvent.findFirstOrThrow({
      where: { issuerId: issuer.id, kind: 'settled', externalId: event.id },
    });
    txnId = stored.id;
    await issuer.call('PUT', '/api/v2/webhook-endpoint', { url: 'https://hooks.example.com/rewards' });
  });
  after(async () => {
    await assertLedgerHealthy(app.db, issuer.id);
    await app.close();
  });

  it('credits cashback: 201, summary, activity, ledger entries, export, webhook, trial balance', async () => {
    const res = await post({
      balanceType: 'cashback',
      amountMinor: 700,
      reasonCode: 'missing_reward',
      transactionId: txnId,
      note: 'call 1',
    });
    assert.equal(res.status, 201, res.text);
    valid(adjustmentSchema, res.body);
    assert.equal(res.body.amountMinor, 700);
    assert.equal(res.body.transactionId, txnId);
    const s = await summary();
    valid(summarySchema, s);
    assert.equal(s.cashback.adjustedMinor, 700);
    assert.equal(s.cashback.balanceMinor, s.cashback.earnedMinor - s.cashback.clawedBackMinor + 700);

    const activity = (await issuer.call('GET', `${base()}/rewards/activity`)).body.data;
    const row = activity.find((r: any) => r.id === res.body.rewardEventId);
    assert.equal(row?.type, 'cashback_adjusted');
    assert.equal(row.amountMinor, 700);
    assert.equal(row.transactionId, txnId);

    const entries = (await issuer.call('GET', `${base()}/transaction/${txnId}/ledger-entries`)).body.data;
    const transfer = entries.find((t: any) => t.transferId === res.body.transferId);
    assert.equal(transfer?.kind, 'adjust_credit_cashback');
    assert.deepEqual(
      transfer.entries.map((e: any) => [e.accountId, e.amountMinor]).sort(),
      [
        [`${issuer.id}:chg_cashback:${chgId}`, 700],
        [`${issuer.id}:issuer_adjustments`, -700],
      ].sort(),
    );

    const hook = await app.db.webhook.findUniqueOrThrow({
      where: { idempotencyKey: `reward_adjusted:${res.body.id}` },
    });
    valid(FACT_WEBHOOK_DATA_SCHEMAS.reward_adjusted, hook.data);
    assert.equal((hook.data as any).amountMinor, 700);
    const audit = await app.db.operatorAuditLog.findFirst({
      where: { action: 'adjustment.post', targetId: res.body.id },
    });
    assert.match(audit?.actor ?? '', /^tok_/, 'the token that posted it');
    await assertLedgerHealthy(app.db, issuer.id);
  });

  it('debits cashback; a debit beyond the balance is 409 insufficient_balance and posts nothing', async () => {
    const before = await summary();
    const tooMuch = await post({
      balanceType: 'cashback',
      amountMinor: -(before.cashback.balanceMinor + 1),
      reasonCode: 'correction',
    });
    assertError(tooMuch, 409, 'insufficient_balance');
    assert.equal(tooMuch.body.details.availableMinor, before.cashback.balanceMinor);
    assert.deepEqual(await summary(), before);
    const res = await post({ balanceType: 'cashback', amountMinor: -200, reasonCode: 'fraud' });
    assert.equal(res.status, 201, res.text);
    const s = await summary();
    assert.equal(s.cashback.adjustedMinor, before.cashback.adjustedMinor - 200);
    assert.equal(s.cashback.balanceMinor, before.cashback.balanceMinor - 200);
    const activity = (await issuer.call('GET', `${base()}/rewards/activity?type=cashback_adjusted`)).body.data;
    assert.equal(activity[0].amountMinor, -200);
    await assertLedgerHealthy(app.db, issuer.id);
  });

  it('credits branded balance as a grant available now, and debits it soonest-expiring first', async () => {
    const first = await post({
      balanceType: 'branded',
      amountMinor: 300,
      merchantId: merchant.id,
      reasonCode: 'goodwill',
    });
    assert.equal(first.status, 201, first.text);
    assert.match(first.body.rewardGrantId, /^rg_/);
    const balance = (await issuer.call('GET', `${base()}/merchant/${merchant.id}/balance`)).body;
    assert.equal(balance.availableMinor, 300, 'available at once, whatever the delay');
    const grant = balance.grants.find((g: any) => g.rewardGrantId === first.body.rewardGrantId);
    assert.equal(Date.parse(grant.expiresAt) - Date.parse(grant.availableAt), 90 * 86_400_000);

    const second = await post({
      balanceType: 'branded',
      amountMinor: 100,
      merchantId: merchant.id,
      reasonCode: 'goodwill',
    });
    assert.equal(second.status, 201);
    const tooMuch = await post({
      balanceType: 'branded',
      amountMinor: -401,
      merchantId: merchant.id,
      reasonCode: 'correction',
    });
    assertError(tooMuch, 409, 'insufficient_balance');
    assert.equal(tooMuch.body.details.availableMinor, 400);
    const debit = await post({
      balanceType: 'branded',
      amountMinor: -350,
      merchantId: merchant.id,
      reasonCode: 'correction',
    });
    assert.equal(debit.status, 201, debit.text);
    const draws = await app.db.rewardGrantDraw.findMany({ where: { transferId: debit.body.transferId } });
    assert.deepEqual(
      draws.map((d) => [d.grantId, Number(d.amountMinor)]).sort(),
      [
        [first.body.rewardGrantId, 300],
        [second.body.rewardGrantId, 50],
      ].sort(),
      'the first grant expires first (same expiry rule, created earlier)',
    );
    const s = await summary();
    assert.equal(s.brandedBalance.adjustedMinor, 50);
    const b = s.brandedBalance;
    assert.equal(
      b.earnedMinor + b.adjustedMinor,
      b.availableMinor + b.notYetAvailableMinor + b.spentMinor + b.expiredMinor + b.clawedBackMinor,
    );
    await assertLedgerHealthy(app.db, issuer.id);
  });

  it('shows every adjustment in the export with signed amounts that reconcile with the summary', async () => {
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const to = new Date(Date.now() + 3_600_000).toISOString();
    const res = await issuer.call('GET', `/api/v2/reward-events/export?from=${from}&to=${to}`);
    assert.equal(res.status, 200, res.text);
    const rows = res.text
      .trim()
      .split('\n')
      .map((l: string) => JSON.parse(l))
      .filter((r: any) => r.record !== 'checksum');
    const net = (type: string) =>
      rows.filter((r: any) => r.type === type).reduce((s: number, r: any) => s + r.amountMinor, 0);
    const s = await summary();
    assert.equal(net('cashback_adjusted'), s.cashback.adjustedMinor);
    assert.equal(net('branded_adjusted'), s.brandedBalance.adjustedMinor);
    for (const r of rows.filter((r: any) => r.type.endsWith('_adjusted')))
      assert.ok(r.transferId, 'names its transfer');
    const trial = (await app.operator('GET', '/admin/v1/ledger/trial-balance')).body;
    assert.equal(trial.totalMinor, 0);
    const funding = trial.accounts.find((a: any) => a.id === `${issuer.id}:issuer_adjustments`);
    assert.equal(funding.balanceMinor, 700 - 200 + 50, 'what the issuer funded, net');
  });

  it('requires an Idempotency-Key, and the same key posts once', async () => {
    const body = { balanceType: 'cashback', amountMinor: 5, reasonCode: 'goodwill' };
    assertError(await post(body, null), 400, 'idempotency_key_required');
    const key = nextKey();
    const first = await post(body, key);
    const again = await post(body, key);
    assert.equal(first.status, 201);
    assert.equal(again.status, 201);
    assert.equal(again.body.id, first.body.id);
    assert.equal(await app.db.adjustment.count({ where: { issuerId: issuer.id, idempotencyKey: key } }), 1);
    // After the HTTP replay window the key still names the adjustment: the ledger keeps it.
    await app.db.idempotencyKey.deleteMany({});
    const late = await post(body, key);
    assert.equal(late.body.id, first.body.id);
    assertError(await post({ ...body, amountMinor: 6 }, key), 409, 'idempotency_key_reused');
  });

  it("refuses amounts over the issuer's limit (operator-adjustable) with 400 adjustment_too_large", async () => {
    assertError(
      await post({ balanceType: 'cashback', amountMinor: 10_001, reasonCode: 'goodwill' }),
      400,
      'adjustment_too_large',
    );
    assertError(
      await post({ balanceType: 'cashback', amountMinor: -10_001, reasonCode: 'goodwill' }),
      400,
      'adjustment_too_large',
    );
    const patched = await app.operator('PATCH', `/admin/v1/issuers/${issuer.id}`, { adjustmentLimitMinor: 20_000 });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.adjustmentLimitMinor, 20_000);
    const res = await post({ balanceType: 'cashback', amountMinor: 10_001, reasonCode: 'goodwill' });
    assert.equal(res.status, 201, res.text);
    await app.operator('PATCH', `/admin/v1/issuers/${issuer.id}`, { adjustmentLimitMinor: 10_000 });
  });

  it('validates the body: zero, branded without merchant, cashback with merchant, unknown reason', async () => {
    for (const body of [
      { balanceType: 'cashback', amountMinor: 0, reasonCode: 'goodwill' },
      { balanceType: 'branded', amountMinor: 5, reasonCode: 'goodwill' },
      { balanceType: 'cashback', amountMinor: 5, reasonCode: 'goodwill', merchantId: merchant.id },
      { balanceType: 'cashback', amountMinor: 5, reasonCode: 'sorry' },
      { balanceType: 'cashback', amountMinor: 1.5, reasonCode: 'goodwill' },
    ])
      assertError(await post(body), 400, 'invalid_body');
  });

  it("answers 404 for another issuer's group, adjustment and transaction, exactly like missing ones", async () => {
    const mine = (await issuer.call('GET', `${base()}/adjustments`)).body.data[0];
    const otherGroup = (await other.call('POST', '/api/v2/chg', groupBody())).body.id;
    assertError(
      await post({ balanceType: 'cashback', amountMinor: 5, reasonCode: 'goodwill' }, nextKey(), other, chgId),
      404,
      'chg_not_found',
    );
    assertError(await other.call('GET', `/api/v2/chg/${chgId}/adjustments`), 404, 'chg_not_found');
    assertError(
      await other.call('GET', `/api/v2/chg/${otherGroup}/adjustments/${mine.id}`),
      404,
      'adjustment_not_found',
    );
    assertError(
      await post(
        { balanceType: 'cashback', amountMinor: 5, reasonCode: 'goodwill', transactionId: txnId },
        nextKey(),
        other,
        otherGroup,
      ),
      404,
      'transaction_not_found',
    );
  });

  it('lists adjustments newest first with pagination, and reads one', async () => {
    const first = await issuer.call('GET', `${base()}/adjustments?limit=2`);
    assert.equal(first.status, 200);
    assert.equal(first.body.data.length, 2);
    const next = await issuer.call('GET', `${base()}/adjustments?limit=2&cursor=${first.body.nextCursor}`);
    assert.ok(next.body.data.length > 0);
    assert.ok(next.body.data[0].createdAt <= first.body.data[1].createdAt);
    const one = await issuer.call('GET', `${base()}/adjustments/${first.body.data[0].id}`);
    assert.deepEqual(one.body, first.body.data[0]);
  });
});
