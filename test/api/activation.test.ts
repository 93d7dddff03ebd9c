import assert from 'node:assert/strict';
import { startTestApp, newIssuer, assertError, type TestApp, type TestIssuer } from '../helpers/app';
import { createGroup, createMerchant, createOffer, daysFromNow } from '../helpers/catalogue';

describe('merchant activation', () => {
  let app: TestApp;
  let issuer: TestIssuer;
  before(async () => {
    app = await startTestApp();
    issuer = await newIssuer(app);
  });
  after(() => app.close());

  it('answers not_activated before any activation', async () => {
    const chgId = await createGroup(issuer);
    const merchant = await createMerchant(app);
    const res = await issuer.call('GET', `/api/v2/chg/${chgId}/merchant/${merchant.id}/activation`);
    assert.deepEqual(res.body, {
      merchantId: merchant.id,
      chgId,
      status: 'not_activated',
      activatedAt: null,
      presentedOfferId: null,
      deactivatedAt: null,
    });
  });

  it('activates with no body at all: its one field is optional, so no body means {}', async () => {
    const chgId = await createGroup(issuer);
    const merchant = await createMerchant(app);
    const res = await issuer.call('PUT', `/api/v2/chg/${chgId}/merchant/${merchant.id}/activation`);
    assert.equal(res.status, 201, res.text);
    assert.deepEqual([res.body.status, res.body.presentedOfferId], ['active', null]);
    // A body that is present must still be an object.
    assertError(
      await app.request('PUT', `/api/v2/chg/${chgId}/merchant/${merchant.id}/activation`, {
        token: issuer.token,
        raw: '[]',
      }),
      400,
      'invalid_body',
    );
  });

  it('lives through its presented offer: 201, 200 keeping the first offer, later offers still eligible, group deactivation ends it', async () => {
    const chgId = await createGroup(issuer);
    const merchant = await createMerchant(app);
    const first = await createOffer(app, merchant.id);
    const second = await createOffer(app, merchant.id);
    const path = `/api/v2/chg/${chgId}/merchant/${merchant.id}`;
    const created = await issuer.call('PUT', `${path}/activation`, { presentedOfferId: first.id });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual([created.body.status, created.body.presentedOfferId], ['active', first.id]);
    const again = await issuer.call('PUT', `${path}/activation`, { presentedOfferId: second.id });
    assert.equal(again.status, 200);
    assert.deepEqual([again.body.presentedOfferId, again.body.activatedAt], [first.id, created.body.activatedAt]);
    // The presented offer ends; a later offer of the merchant is still eligible without re-activation.
    await app.operator('PATCH', `/admin/v1/merchants/${merchant.id}/offers/${first.id}`, {
      endsAt: new Date().toISOString(),
    });
    await app.operator('PATCH', `/admin/v1/merchants/${merchant.id}/offers/${second.id}`, { status: 'inactive' });
    const later = await createOffer(app, merchant.id, { startsAt: new Date().toISOString() });
    const eligibility = await issuer.call('GET', `${path}/eligibility`);
    assert.deepEqual([eligibility.body.eligible, eligibility.body.eligibleOfferIds], [true, [later.id]]);
    assert.equal((await issuer.call('GET', `${path}/activation`)).body.status, 'active');
    // Deactivating the group makes the activation unusable.
    assert.equal((await issuer.call('DELETE', `/api/v2/chg/${chgId}`)).status, 200);
    const after = await issuer.call('GET', `${path}/eligibility`);
    assert.equal(after.body.eligible, false);
    assert.ok(after.body.reasons.includes('chg_inactive'), after.text);
    assert.equal((await issuer.call('GET', `${path}`)).status, 200, 'the group stays readable');
    assertError(await issuer.call('PUT', `${path}/activation`, {}), 409, 'chg_inactive');
  });

  it("rejects presenting an ended, scheduled or other merchant's offer with 400", async () => {
    const chgId = await createGroup(issuer);
    const merchant = await createMerchant(app);
    const ended = await createOffer(app, merchant.id, { startsAt: daysFromNow(-5), endsAt: daysFromNow(-1) });
    const scheduled = await createOffer(app, merchant.id, { startsAt: daysFromNow(3) });
    const foreign = await createOffer(app, (await createMerchant(app)).id);
    const path = `/api/v2/chg/${chgId}/merchant/${merchant.id}/activation`;
    assertError(await issuer.call('PUT', path, { presentedOfferId: ended.id }), 400, 'offer_not_active');
    assertError(await issuer.call('PUT', path, { presentedOfferId: scheduled.id }), 400, 'offer_not_active');
    assertError(await issuer.call('PUT', path, { presentedOfferId: foreign.id }), 400, 'offer_not_of_merchant');
    assertError(
      await issuer.call('PUT', path, { presentedOfferId: `ofr_${crypto.randomUUID()}` }),
      400,
      'offer_not_of_merchant',
    );
    assertError(await issuer.call('PUT', path, { presentedOfferId: 'ofr_bad' }), 400, 'invalid_body');
    assertError(await issuer.call('PUT', path, { extra: true }), 400, 'invalid_body');
    assert.equal((await issuer.call('GET', path)).body.status, 'not_activated');
  });

  it('deactivates with DELETE, then reactivates with 201 and a new activatedAt, then 200 again', async () => {
    const chgId = await createGroup(issuer);
    const merchant = await createMerchant(app);
    const offer = await createOffer(app, merchant.id);
    const path = `/api/v2/chg/${chgId}/merchant/${merchant.id}/activation`;
    const created = await issuer.call('PUT', path, { presentedOfferId: offer.id });
    const removed = await issuer.call('DELETE', path);
    assert.equal(removed.status, 200);
    assert.equal(removed.body.status, 'inactive');
    assert.ok(removed.body.deactivatedAt);
    assert.deepEqual(
      (await issuer.call('GET', `/api/v2/chg/${chgId}/merchant/${merchant.id}/eligibility`)).body.reasons,
      ['merchant_not_activated'],
    );
    assert.equal((await issuer.call('DELETE', path)).status, 200, 'idempotent');
    const back = await issuer.call('PUT', path, {});
    assert.equal(back.status, 201, 'the merchant was not active: this PUT activated it');
    assert.deepEqual(
      [back.body.status, back.body.presentedOfferId, back.body.deactivatedAt],
      ['active', offer.id, null],
    );
    assert.ok(back.body.activatedAt > created.body.activatedAt);
    const again = await issuer.call('PUT', path, {});
    assert.equal(again.status, 200, 'already active');
    assert.equal(again.body.activatedAt, back.body.activatedAt);
  });

  it('answers exactly one 201 to concurrent reactivations after a DELETE', async () => {
    const chgId = await createGroup(issuer);
    const merchant = await createMerchant(app);
    const path = `/api/v2/chg/${chgId}/merchant/${merchant.id}/activation`;
    assert.equal((await issuer.call('PUT', path, {})).status, 201);
    assert.equal((await issuer.call('DELETE', path)).status, 200);
    const results = await Promise.all(Array.from({ length: 8 }, () => issuer.call('PUT', path, {})));
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 200, 200, 200, 200, 200, 200, 201]);
  });

  it('is idempotent under concurrent PUTs: exactly one 201', async () => {
    const chgId = await createGroup(issuer);
    const merchant = await createMerchant(app);
    const path = `/api/v2/chg/${chgId}/merchant/${merchant.id}/activation`;
    const results = await Promise.all(Array.from({ length: 8 }, () => issuer.call('PUT', path, {})));
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 200, 200, 200, 200, 200, 200, 201]);
  });

  it('answers 404 for foreign groups and hidden merchants, 400 for malformed ids', async () => {
    const other = await newIssuer(app);
    const chgId = await createGroup(issuer);
    const merchant = await createMerchant(app);
    const hidden = await createMerchant(app, { issuerIds: [other.id] });
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const body = method === 'PUT' ? {} : undefined;
      assertError(
        await other.call(method, `/api/v2/chg/${chgId}/merchant/${merchant.id}/activation`, body),
        404,
        'chg_not_found',
      );
      assertError(
        await issuer.call(method, `/api/v2/chg/${chgId}/merchant/${hidden.id}/activation`, body),
        404,
        'merchant_not_found',
      );
      assertError(await issuer.call(method, `/api/v2/chg/${chgId}/merchant/mp_1/activation`, body), 400, 'invalid_id');
    }
  });
});
