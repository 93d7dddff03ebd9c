// The group-level reconciliation routes over HTTP: shapes, pagination, validation, isolation,
// and spend eligibility's delay reasons now that grants exist. Ledger rows are made with the
// real ledger functions (earnBranded, postTransfer, expiry), under a group of the issuer.
import assert from 'node:assert/strict';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { startTestApp, newIssuer, assertError, type TestApp, type TestIssuer } from '../helpers/app';
import { createGroup, createMerchant, walkPages } from '../helpers/catalogue';
import { assertLedgerHealthy } from '../helpers/ledger';
import { createLogger } from '../../core/logger';
import { earnBranded, inTransaction, postTransfer, recordRewardEvent } from '../../core/domain/ledger';
import { expireDueGrants } from '../../activities/expiry';
import { newId } from '../../core/ids';
import { activityPageSchema, expiringSchema, merchantBalanceSchema, summarySchema } from '../../api/balances/schemas';

const DAY_MS = 86_400_000;
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
const valid = (schema: object, body: unknown) => assert.ok(ajv.validate(schema, body), JSON.stringify(ajv.errors));

describe('rewards summary, activity, expiring and merchant balance routes', () => {
  let app: TestApp;
  let issuer: TestIssuer;
  let other: TestIssuer;
  let chgId: string;
  let merchant: any;
  const now = Date.now();
  before(async () => {
    app = await startTestApp();
    issuer = await newIssuer(app);
    other = await newIssuer(app);
    chgId = await createGroup(issuer);
    merchant = await createMerchant(app, {
      brandedBalance: { enabled: true, spendMinimumMinor: 0, availabilityDelayDays: 3, expiryDays: 365 },
    });
    // Available now (expires in 10 days), not yet available (in 3 days), expiring in 100 days, and one expired.
    await earn(700, -1, 10);
    await earn(500, 3, 100);
    await earn(200, -1, 200);
    await earn(50, -20, -1);
    await earnCashback(120);
    await expireDueGrants(
      { db: app.db, logger: createLogger('silent') },
      { atMs: now, batchSize: 10, issuerId: issuer.id },
    );
  });
  after(async () => {
    await assertLedgerHealthy(app.db, issuer.id);
    await app.close();
  });

  async function earn(amountMinor: number, availableInDays: number, expiresInDays: number) {
    const at = new Date(now + Math.min(availableInDays, expiresInDays - 1, -1) * DAY_MS);
    await inTransaction(app.db, async (tx) => {
      const rewardEventId = newId('brevt');
      const earned = await earnBranded(tx, {
        idempotencyKey: `test:${rewardEventId}`,
        issuerId: issuer.id,
        chgId,
        merchantId: merchant.id,
        amountMinor,
        rewardEventId,
        at,
        availableAt: new Date(now + availableInDays * DAY_MS),
        expiresAt: new Date(now + expiresInDays * DAY_MS),
      });
      await recordRewardEvent(tx, {
        id: rewardEventId,
        idempotencyKey: `test:${rewardEventId}`,
        issuerId: issuer.id,
        chgId,
        type: 'branded_earned',
        merchantId: merchant.id,
        amountMinor,
        rewardGrantId: earned.grant.id,
        description: 'earned',
        occurredAt: at,
      });
    });
  }

  async function earnCashback(amountMinor: number) {
    await inTransaction(app.db, async (tx) => {
      const rewardEventId = newId('brevt');
      await recordRewardEvent(tx, {
        id: rewardEventId,
        idempotencyKey: `test:${rewardEventId}`,
        issuerId: issuer.id,
        chgId,
        type: 'cashback_earned',
        merchantId: merchant.id,
        amountMinor,
        description: 'cashback',
        occurredAt: new Date(now),
      });
      await postTransfer(tx, {
        idempotencyKey: `test:${rewardEventId}`,
        kind: 'earn_cashback',
        issuerId: issuer.id,
        chgId,
        merchantId: merchant.id,
        amountMinor,
        rewardEventId,
        at: new Date(now),
      });
    });
  }

  it('summarises the group from the ledger', async () => {
    const res = await issuer.call('GET', `/api/v2/chg/${chgId}/rewards/summary`);
    assert.equal(res.status, 200, res.text);
    valid(summarySchema, res.body);
    assert.deepEqual(res.body, {
      chgId,
      currency: 'usd',
      // Posted by the fixtures straight to the ledger, without a purchase's hold: all payable.
      cashback: {
        earnedMinor: 120,
        clawedBackMinor: 0,
        adjustedMinor: 0,
        paidOutMinor: 0,
        pendingMinor: 0,
        onHoldMinor: 0,
        payableMinor: 120,
        balanceMinor: 120,
        owedMinor: 0,
      },
      brandedBalance: {
        earnedMinor: 1450,
        adjustedMinor: 0,
        availableMinor: 900,
        notYetAvailableMinor: 500,
        spentMinor: 0,
        expiredMinor: 50,
        clawedBackMinor: 0,
      },
    });
  });

  it('lists activity newest first, every type, without duplicates or gaps across pages', async () => {
    const all = await walkPages(issuer, `/api/v2/chg/${chgId}/rewards/activity`, 2);
    assert.equal(all.length, 6);
    assert.equal(new Set(all.map((r) => r.id)).size, 6);
    valid(activityPageSchema, { data: all, nextCursor: null });
    for (let i = 1; i < all.length; i++) {
      const [a, b] = [all[i - 1], all[i]];
      assert.ok(a.occurredAt > b.occurredAt || (a.occurredAt === b.occurredAt && a.id > b.id), 'newest first');
    }
    assert.deepEqual(
      new Set(all.map((r) => r.type)),
      new Set(['branded_earned', 'cashback_earned', 'branded_expired']),
    );
    const expired = all.find((r) => r.type === 'branded_expired');
    assert.equal(expired.amountMinor, 50);
    assert.equal(expired.merchantName, merchant.name);
    assert.match(expired.rewardGrantId, /^rg_/);
    const onlyExpired = await issuer.call('GET', `/api/v2/chg/${chgId}/rewards/activity?type=branded_expired`);
    assert.deepEqual(
      onlyExpired.body.data.map((r: any) => r.id),
      [expired.id],
    );
    assertError(await issuer.call('GET', `/api/v2/chg/${chgId}/rewards/activity?type=bogus`), 400, 'invalid_query');
    assertError(await issuer.call('GET', `/api/v2/chg/${chgId}/rewards/activity?cursor=garbage`), 400, 'invalid_query');
  });

  it('lists grants expiring within withinDays, soonest first, and validates withinDays', async () => {
    const res = await issuer.call('GET', `/api/v2/chg/${chgId}/rewards/expiring`);
    assert.equal(res.status, 200, res.text);
    valid(expiringSchema, res.body);
    assert.deepEqual(
      res.body.data.map((g: any) => g.remainingMinor),
      [700],
    );
    const year = await issuer.call('GET', `/api/v2/chg/${chgId}/rewards/expiring?withinDays=365`);
    assert.deepEqual(
      year.body.data.map((g: any) => g.remainingMinor),
      [700, 500, 200],
    );
    for (const bad of ['0', '366', 'abc', '1.5'])
      assertError(
        await issuer.call('GET', `/api/v2/chg/${chgId}/rewards/expiring?withinDays=${bad}`),
        400,
        'invalid_query',
      );
  });

  it('gives the balance at one merchant with its grants in spending order', async () => {
    const res = await issuer.call('GET', `/api/v2/chg/${chgId}/merchant/${merchant.id}/balance`);
    assert.equal(res.status, 200, res.text);
    valid(merchantBalanceSchema, res.body);
    assert.deepEqual(
      [res.body.availableMinor, res.body.notYetAvailableMinor, res.body.expiringWithin30DaysMinor],
      [900, 500, 700],
    );
    assert.deepEqual(
      res.body.grants.map((g: any) => g.remainingMinor),
      [700, 500, 200],
    );
  });

  it("answers 404 on all four for another issuer's group, and for a merchant the issuer cannot see", async () => {
    for (const path of ['rewards/summary', 'rewards/activity', 'rewards/expiring', `merchant/${merchant.id}/balance`]) {
      assertError(await other.call('GET', `/api/v2/chg/${chgId}/${path}`), 404, 'chg_not_found');
      assertError(await issuer.call('GET', `/api/v2/chg/${newId('chg')}/${path}`), 404, 'chg_not_found');
    }
    const hidden = await createMerchant(app, { issuerIds: [other.id] });
    assertError(
      await issuer.call('GET', `/api/v2/chg/${chgId}/merchant/${hidden.id}/balance`),
      404,
      'merchant_not_found',
    );
    assertError(
      await issuer.call('GET', `/api/v2/chg/${chgId}/merchant/${newId('mp')}/balance`),
      404,
      'merchant_not_found',
    );
    assertError(await issuer.call('GET', `/api/v2/chg/${chgId}/merchant/mp_nope/balance`), 400, 'invalid_id');
  });

  it('names the delay that holds pending balance in spend eligibility: the merchant one, then the issuer one', async () => {
    const group = await createGroup(issuer);
    const path = `/api/v2/chg/${group}/merchant/${merchant.id}/spend-eligibility`;
    const saved = chgId;
    chgId = group;
    try {
      await earn(300, 3, 100);
    } finally {
      chgId = saved;
    }
    const merchantHeld = await issuer.call('GET', path);
    assert.deepEqual(
      [merchantHeld.body.pendingBalanceMinor, merchantHeld.body.spendRestrictionReasons],
      [300, ['no_available_balance', 'merchant_availability_delay']],
    );
    const patched = await app.operator('PATCH', `/admin/v1/issuers/${issuer.id}`, { brandedAvailabilityDelayDays: 5 });
    assert.equal(patched.status, 200, patched.text);
    const issuerHeld = await issuer.call('GET', path);
    assert.deepEqual(issuerHeld.body.spendRestrictionReasons, ['no_available_balance', 'issuer_availability_delay']);
    await app.operator('PATCH', `/admin/v1/issuers/${issuer.id}`, { brandedAvailabilityDelayDays: 0 });
  });
});
