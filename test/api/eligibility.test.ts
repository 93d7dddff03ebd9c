import assert from 'node:assert/strict';
import { startTestApp, newIssuer, assertError, type TestApp, type TestIssuer } from '../helpers/app';
import { createGroup, createMerchant, createOffer, daysFromNow } from '../helpers/catalogue';

describe('earn and spend eligibility routes', () => {
  let app: TestApp;
  let issuer: TestIssuer;
  before(async () => {
    app = await startTestApp();
    issuer = await newIssuer(app);
  });
  after(() => app.close());

  async function activated(merchantOverrides: Record<string, unknown> = {}) {
    const chgId = await createGroup(issuer);
    const merchant = await createMerchant(app, merchantOverrides);
    const path = `/api/v2/chg/${chgId}/merchant/${merchant.id}`;
    return { chgId, merchant, path };
  }

  it('previews a transaction: winning offer and estimated reward', async () => {
    const { merchant, path } = await activated({
      brandedBalance: { enabled: true, spendMinimumMinor: 0, availabilityDelayDays: 0, expiryDays: 365 },
    });
    await createOffer(app, merchant.id, { cashbackRateBps: 200 });
    const best = await createOffer(app, merchant.id, {
      cashbackRateBps: 300,
      brandedRateBps: 200,
      maxRewardMinor: 400,
    });
    assert.equal((await issuer.call('PUT', `${path}/activation`, {})).status, 201);
    const res = await issuer.call('GET', `${path}/eligibility?amountMinor=10000&mcc=5812`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      [res.body.eligible, res.body.reasons, res.body.winningOfferId, res.body.estimatedRewardMinor],
      [true, [], best.id, 400],
    );
    const plain = await issuer.call('GET', `${path}/eligibility`);
    assert.equal(plain.body.estimatedRewardMinor, undefined);
    assert.equal(plain.body.eligibleOfferIds.length, 2);
  });

  it('estimates what settlement pays at a merchant without branded balance: cashback only', async () => {
    const { merchant, path } = await activated(); // branded balance disabled
    const offer = await createOffer(app, merchant.id, { cashbackRateBps: 300, brandedRateBps: 200 });
    assert.equal((await issuer.call('PUT', `${path}/activation`, {})).status, 201);
    const res = await issuer.call('GET', `${path}/eligibility?amountMinor=10000`);
    assert.deepEqual(
      [res.body.eligible, res.body.winningOfferId, res.body.estimatedRewardMinor],
      [true, offer.id, 300],
    );
  });

  it('reports merchant_not_activated and no_active_offer', async () => {
    const { merchant, path } = await activated();
    assert.deepEqual((await issuer.call('GET', `${path}/eligibility`)).body.reasons, [
      'merchant_not_activated',
      'no_active_offer',
    ]);
    await createOffer(app, merchant.id, { startsAt: daysFromNow(2) });
    await issuer.call('PUT', `${path}/activation`, {});
    assert.deepEqual((await issuer.call('GET', `${path}/eligibility`)).body.reasons, ['no_active_offer']);
    const future = await issuer.call('GET', `${path}/eligibility?at=${encodeURIComponent(daysFromNow(3))}`);
    assert.equal(future.body.eligible, true);
  });

  it('reports below_min_spend and mcc_excluded for a previewed transaction', async () => {
    const { merchant, path } = await activated();
    await createOffer(app, merchant.id, { minSpendMinor: 2000, mccs: ['5812'] });
    await issuer.call('PUT', `${path}/activation`, {});
    assert.deepEqual((await issuer.call('GET', `${path}/eligibility?amountMinor=1999&mcc=5812`)).body.reasons, [
      'below_min_spend',
    ]);
    assert.deepEqual((await issuer.call('GET', `${path}/eligibility?amountMinor=2000&mcc=5411`)).body.reasons, [
      'mcc_excluded',
    ]);
    assert.equal((await issuer.call('GET', `${path}/eligibility?amountMinor=2000&mcc=5812`)).body.eligible, true);
  });

  it('reports merchant_inactive and chg_inactive', async () => {
    const { chgId, merchant, path } = await activated();
    await createOffer(app, merchant.id);
    await issuer.call('PUT', `${path}/activation`, {});
    await app.operator('PATCH', `/admin/v1/merchants/${merchant.id}`, { status: 'inactive' });
    assert.deepEqual((await issuer.call('GET', `${path}/eligibility`)).body.reasons, ['merchant_inactive']);
    await issuer.call('DELETE', `/api/v2/chg/${chgId}`);
    assert.ok((await issuer.call('GET', `${path}/eligibility`)).body.reasons.includes('chg_inactive'));
  });

  it('rejects a bad query with 400 and foreign groups with 404', async () => {
    const { path, chgId, merchant } = await activated();
    assertError(await issuer.call('GET', `${path}/eligibility?amountMinor=-1`), 400, 'invalid_query');
    assertError(await issuer.call('GET', `${path}/eligibility?mcc=58`), 400, 'invalid_query');
    assertError(await issuer.call('GET', `${path}/eligibility?at=yesterday`), 400, 'invalid_query');
    const leap = await issuer.call('GET', `${path}/eligibility?at=${encodeURIComponent('2016-12-31T23:59:60Z')}`);
    assertError(leap, 400, 'invalid_query');
    assert.ok(
      leap.body.details.errors.some((e: any) => e.path === '/at'),
      JSON.stringify(leap.body.details),
    );
    assertError(await issuer.call('GET', `${path}/spend-eligibility?amountMinor=1.5`), 400, 'invalid_query');
    const other = await newIssuer(app);
    assertError(
      await other.call('GET', `/api/v2/chg/${chgId}/merchant/${merchant.id}/eligibility`),
      404,
      'chg_not_found',
    );
    assertError(
      await other.call('GET', `/api/v2/chg/${chgId}/merchant/${merchant.id}/spend-eligibility`),
      404,
      'chg_not_found',
    );
    assertError(
      await issuer.call('GET', `/api/v2/chg/${chgId}/merchant/mp_${crypto.randomUUID()}/spend-eligibility`),
      404,
      'merchant_not_found',
    );
  });

  it('reports spend restrictions reachable before the ledger exists', async () => {
    const enabled = await activated({
      brandedBalance: { enabled: true, spendMinimumMinor: 500, availabilityDelayDays: 3, expiryDays: 365 },
    });
    const res = await issuer.call('GET', `${enabled.path}/spend-eligibility?amountMinor=400`);
    assert.deepEqual(res.body, {
      merchantId: enabled.merchant.id,
      currency: 'usd',
      eligible: false,
      availableBalanceMinor: 0,
      pendingBalanceMinor: 0,
      spendRestrictionReasons: ['no_available_balance', 'below_merchant_minimum'],
    });
    const disabled = await activated({ status: 'inactive' });
    await issuer.call('DELETE', `/api/v2/chg/${disabled.chgId}`);
    const reasons = (await issuer.call('GET', `${disabled.path}/spend-eligibility`)).body.spendRestrictionReasons;
    assert.deepEqual(reasons, [
      'no_available_balance',
      'chg_inactive',
      'merchant_inactive',
      'branded_balance_disabled',
    ]);
  });
});
