import assert from 'node:assert/strict';
import { startTestApp, assertError, newIssuer, type TestApp } from '../helpers/app';
import { createGroup, createMerchant, createOffer, daysFromNow, walkPages } from '../helpers/catalogue';
import { uniq } from '../helpers/groups';
import { nameOperator } from '../helpers/operators';

describe('operator catalogue API', () => {
  let app: TestApp;
  /** The API's clock: real time, unless a test pins it to one instant. */
  let pinnedNow: Date | undefined;
  before(async () => (app = await startTestApp({ clock: { now: () => pinnedNow ?? new Date() } })));
  afterEach(() => (pinnedNow = undefined));
  after(() => app.close());
  const operator = { call: (method: string, path: string, body?: unknown) => app.operator(method, path, body) };

  it('creates a merchant with defaults and every field, and audits it', async () => {
    const plain = await createMerchant(app);
    assert.match(plain.id, /^mp_/);
    assert.equal(plain.status, 'active');
    assert.equal(plain.issuerIds, null);
    assert.deepEqual(plain.brandedBalance, {
      enabled: false,
      spendMinimumMinor: 0,
      availabilityDelayDays: 0,
      expiryDays: 365,
    });
    const full = await createMerchant(app, {
      logoUrl: 'https://cdn.example/logo.png',
      websiteUrl: 'https://example.com',
      issuerIds: null,
      brandedBalance: { enabled: true, spendMinimumMinor: 500, availabilityDelayDays: 3, expiryDays: 180 },
      // Rules no other test's events meet: the merchant is every issuer's, sandbox ones included.
      matchRules: {
        descriptorPatterns: ['CATALOGUE ADMIN CAFE'],
        acquirerMerchantIds: ['catalogue-admin-1'],
        mccs: ['5814'],
      },
    });
    assert.deepEqual(full.matchRules, {
      descriptorPatterns: ['CATALOGUE ADMIN CAFE'],
      acquirerMerchantIds: ['catalogue-admin-1'],
      mccs: ['5814'],
    });
    const audit = await app.db.operatorAuditLog.findMany({ where: { targetId: full.id } });
    assert.deepEqual(
      audit.map((a) => a.action),
      ['merchant.create'],
    );
  });

  it('reads, patches and pages merchants', async () => {
    const merchant = await createMerchant(app);
    assert.deepEqual((await app.operator('GET', `/admin/v1/merchants/${merchant.id}`)).body, merchant);
    const patched = await app.operator('PATCH', `/admin/v1/merchants/${merchant.id}`, {
      status: 'inactive',
      brandedBalance: { enabled: true },
      issuerIds: [`iss_${crypto.randomUUID()}`],
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.status, 'inactive');
    assert.equal(patched.body.brandedBalance.enabled, true);
    assert.equal(patched.body.brandedBalance.expiryDays, 365);
    assert.equal(patched.body.issuerIds.length, 1);
    const back = await app.operator('PATCH', `/admin/v1/merchants/${merchant.id}`, { issuerIds: null });
    assert.equal(back.body.issuerIds, null);
    const all = await walkPages(operator, '/admin/v1/merchants', 3);
    assert.equal(new Set(all.map((m) => m.id)).size, all.length);
    assert.ok(all.some((m) => m.id === merchant.id));
  });

  it('rejects unknown fields, bad values and empty patches with 400', async () => {
    assertError(
      await app.operator('POST', '/admin/v1/merchants', { name: 'x', category: 'y', colour: 'blue' }),
      400,
      'invalid_body',
    );
    assertError(
      await app.operator('POST', '/admin/v1/merchants', { name: 'x', category: 'y', issuerIds: [] }),
      400,
      'invalid_body',
    );
    assertError(
      await app.operator('POST', '/admin/v1/merchants', {
        name: 'x',
        category: 'y',
        brandedBalance: { spendMinimumMinor: -1 },
      }),
      400,
      'invalid_body',
    );
    const merchant = await createMerchant(app);
    assertError(await app.operator('PATCH', `/admin/v1/merchants/${merchant.id}`, {}), 400, 'invalid_body');
    assertError(
      await app.operator('POST', `/admin/v1/merchants/${merchant.id}/offers`, {
        title: 't',
        cashbackRateBps: 10001,
        brandedRateBps: 0,
        startsAt: daysFromNow(0),
      }),
      400,
      'invalid_body',
    );
    assertError(
      await app.operator('POST', `/admin/v1/merchants/${merchant.id}/offers`, {
        title: 't',
        cashbackRateBps: 0,
        brandedRateBps: 0,
        startsAt: daysFromNow(0),
      }),
      400,
      'invalid_body',
    );
    assertError(
      await app.operator('POST', `/admin/v1/merchants/${merchant.id}/offers`, {
        title: 't',
        cashbackRateBps: 1,
        brandedRateBps: 0,
        startsAt: daysFromNow(0),
        endsAt: daysFromNow(-1),
      }),
      400,
      'invalid_body',
    );
    // A timestamp with no instant (a leap second) is a 400 naming the field, never a 500.
    const leap = await app.operator('POST', `/admin/v1/merchants/${merchant.id}/offers`, {
      title: 't',
      cashbackRateBps: 1,
      brandedRateBps: 0,
      startsAt: '2016-12-31T23:59:60Z',
    });
    assertError(leap, 400, 'invalid_body');
    assert.ok(
      leap.body.details.errors.some((e: any) => e.path === '/startsAt'),
      JSON.stringify(leap.body.details),
    );
    const offer = await createOffer(app, merchant.id);
    assertError(
      await app.operator('PATCH', `/admin/v1/merchants/${merchant.id}/offers/${offer.id}`, {
        endsAt: '2027-02-29T00:00:00Z',
      }),
      400,
      'invalid_body',
    );
  });

  it('creates and patches offers; endsAt now ends one, status inactive withdraws it', async () => {
    const merchant = await createMerchant(app);
    const offer = await createOffer(app, merchant.id, { minSpendMinor: 1000, maxRewardMinor: 2500, mccs: ['5812'] });
    assert.match(offer.id, /^ofr_/);
    assert.deepEqual(
      [offer.status, offer.minSpendMinor, offer.maxRewardMinor, offer.mccs, offer.maxRewardPerChgMinor],
      ['active', 1000, 2500, ['5812'], null],
    );
    const ended = await app.operator('PATCH', `/admin/v1/merchants/${merchant.id}/offers/${offer.id}`, {
      endsAt: new Date().toISOString(),
      mccs: null,
    });
    assert.equal(ended.status, 200, ended.text);
    assert.deepEqual([ended.body.status, ended.body.mccs], ['ended', null]);
    const other = await createOffer(app, merchant.id);
    const withdrawn = await app.operator('PATCH', `/admin/v1/merchants/${merchant.id}/offers/${other.id}`, {
      status: 'inactive',
    });
    assert.deepEqual([withdrawn.body.status, withdrawn.body.catalogueStatus], ['ended', 'inactive']);
    const actions = (
      await app.db.operatorAuditLog.findMany({ where: { targetId: offer.id }, orderBy: { createdAt: 'asc' } })
    ).map((a) => a.action);
    assert.deepEqual(actions, ['offer.create', 'offer.update']);
  });

  it('keeps an offer’s budget, funding and commission; operators read the budget’s use, issuers the public terms', async () => {
    // A monthly budget is read for the month the API's clock is in: pinned, so that a run across a
    // month's turn reads every answer in the month expected.
    pinnedNow = new Date();
    const month = pinnedNow.toISOString().slice(0, 7);
    const merchant = await createMerchant(app);
    const plain = await createOffer(app, merchant.id);
    assert.deepEqual(
      [plain.budgetMinor, plain.budgetPeriod, plain.funding, plain.commission, plain.budget],
      [null, null, { issuerShareBps: 0 }, { rateBps: 0, flatMinor: 0 }, null],
      'unlimited, merchant-funded and without commission by default',
    );
    const offer = await createOffer(app, merchant.id, {
      budgetMinor: 50_000,
      budgetPeriod: 'month',
      funding: { issuerShareBps: 2500 },
      commission: { rateBps: 150, flatMinor: 25 },
    });
    assert.deepEqual(
      [offer.budgetMinor, offer.budgetPeriod, offer.funding, offer.commission, offer.budget],
      [50_000, 'month', { issuerShareBps: 2500 }, { rateBps: 150, flatMinor: 25 }, budgetUse(50_000, 0, month)],
    );
    const one = await app.operator('GET', `/admin/v1/merchants/${merchant.id}/offers/${offer.id}`);
    assert.equal(one.status, 200, one.text);
    assert.deepEqual(one.body, offer);
    // Only the fields given change, inside commission too; a lifetime budget reports its life.
    const patched = await app.operator('PATCH', `/admin/v1/merchants/${merchant.id}/offers/${offer.id}`, {
      commission: { flatMinor: 0 },
      budgetPeriod: null,
    });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(
      [patched.body.commission, patched.body.funding, patched.body.budget],
      [{ rateBps: 150, flatMinor: 0 }, { issuerShareBps: 2500 }, budgetUse(50_000, 0, 'lifetime')],
    );
    // Removing a budget is a raise without bound: held for a second operator (four eyes).
    const held = await app.operator('PATCH', `/admin/v1/merchants/${merchant.id}/offers/${offer.id}`, {
      budgetMinor: null,
    });
    assert.equal(held.status, 202, held.text);
    const second = await nameOperator(app, ['catalogue']);
    const unlimited = await second.call('POST', `/admin/v1/approvals/${held.body.approvalId}/approve`);
    assert.equal(unlimited.body.result.body.budget, null);
    const all = await walkPages(operator, `/admin/v1/merchants/${merchant.id}/offers`, 1);
    assert.deepEqual(
      all.map((o) => o.id),
      [plain.id, offer.id],
    );
    for (const bad of [
      { budgetPeriod: 'week' },
      { budgetMinor: -1 },
      { funding: { issuerShareBps: 10_001 } },
      { funding: { merchantShareBps: 100 } },
      { commission: { rateBps: 1.5 } },
      { commission: { flatMinor: -1 } },
    ])
      assertError(await app.operator('PATCH', `/admin/v1/merchants/${merchant.id}/offers/${offer.id}`, bad), 400);

    // An issuer reads the budget and its own share, not what the merchant pays the programme.
    const issuer = await newIssuer(app);
    const chgId = await createGroup(issuer);
    const seen = await issuer.call('GET', `/api/v2/chg/${chgId}/offer/${plain.id}`);
    assert.equal(seen.status, 200, seen.text);
    assert.deepEqual(
      [seen.body.budgetMinor, seen.body.budgetPeriod, seen.body.funding],
      [null, null, { issuerShareBps: 0 }],
    );
    assert.equal(seen.body.commission, undefined);
    assert.equal(seen.body.budget, undefined);
    assertError(
      await app.operator('GET', `/admin/v1/merchants/${merchant.id}/offers/${`ofr_${crypto.randomUUID()}`}`),
      404,
      'offer_not_found',
    );
    assertError(
      await app.operator('GET', `/admin/v1/merchants/${(await createMerchant(app)).id}/offers/${offer.id}`),
      404,
      'offer_not_found',
    );
    assertError(await app.request('GET', `/admin/v1/merchants/${merchant.id}/offers`, { token: issuer.token }), 401);
  });

  it('keeps an offer’s activation, audience and holdout, validating every field; issuers read them', async () => {
    const merchant = await createMerchant(app);
    const plain = await createOffer(app, merchant.id);
    assert.deepEqual(
      [plain.activation, plain.audience, plain.holdoutBps],
      ['opt_in', null, 0],
      'untargeted by default',
    );
    const audience = {
      segments: ['premium', 'student'],
      excludeSegments: ['staff'],
      merchantHistory: { kind: 'lapsed', lookbackDays: 180 },
    };
    const offer = await createOffer(app, merchant.id, { activation: 'auto', audience, holdoutBps: 1000 });
    assert.deepEqual([offer.activation, offer.audience, offer.holdoutBps], ['auto', audience, 1000]);
    const patched = await app.operator('PATCH', `/admin/v1/merchants/${merchant.id}/offers/${offer.id}`, {
      audience: { merchantHistory: { kind: 'new', lookbackDays: 365 } },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(
      [patched.body.activation, patched.body.audience, patched.body.holdoutBps],
      ['auto', { merchantHistory: { kind: 'new', lookbackDays: 365 } }, 1000],
    );
    const cleared = await app.operator('PATCH', `/admin/v1/merchants/${merchant.id}/offers/${offer.id}`, {
      audience: null,
      activation: 'opt_in',
    });
    assert.deepEqual([cleared.body.activation, cleared.body.audience], ['opt_in', null]);
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ holdoutBps: 5001 }, '/holdoutBps'],
      [{ holdoutBps: -1 }, '/holdoutBps'],
      [{ activation: 'always' }, '/activation'],
      [{ audience: {} }, '/audience'],
      [{ audience: { segments: ['Premium'] } }, '/audience/segments/0'],
      [{ audience: { segments: [] } }, '/audience/segments'],
      [{ audience: { merchantHistory: { kind: 'new', lookbackDays: 0 } } }, '/audience/merchantHistory/lookbackDays'],
      [{ audience: { merchantHistory: { kind: 'loyal', lookbackDays: 30 } } }, '/audience/merchantHistory/kind'],
      [{ audience: { merchantHistory: { kind: 'new' } } }, '/audience/merchantHistory/lookbackDays'],
      [{ audience: { segments: ['a'], excludeSegments: ['a'] } }, '/audience/excludeSegments'],
      [{ audience: { segments: ['a'], extra: true } }, '/audience/extra'],
    ];
    for (const [body, path] of bad) {
      const res = await app.operator('PATCH', `/admin/v1/merchants/${merchant.id}/offers/${offer.id}`, body);
      assertError(res, 400);
      assert.ok(
        res.body.details.errors.some((e: any) => e.path === path),
        `${JSON.stringify(body)}: ${JSON.stringify(res.body.details.errors)}`,
      );
    }
    const unchanged = await app.operator('GET', `/admin/v1/merchants/${merchant.id}/offers/${offer.id}`);
    assert.deepEqual(
      [unchanged.body.activation, unchanged.body.audience, unchanged.body.holdoutBps],
      ['opt_in', null, 1000],
    );
    const issuer = await newIssuer(app);
    const chgId = await createGroup(issuer);
    const seen = await issuer.call('GET', `/api/v2/chg/${chgId}/offer/${plain.id}`);
    assert.deepEqual([seen.body.activation, seen.body.audience, seen.body.holdoutBps], ['opt_in', null, 0]);
  });

  it('answers 404 for unknown merchants and offers, 400 for malformed ids, 401 for issuer tokens', async () => {
    const missing = `mp_${crypto.randomUUID()}`;
    assertError(await app.operator('GET', `/admin/v1/merchants/${missing}`), 404, 'merchant_not_found');
    assertError(
      await app.operator('PATCH', `/admin/v1/merchants/${missing}`, { name: uniq('n') }),
      404,
      'merchant_not_found',
    );
    assertError(
      await app.operator('POST', `/admin/v1/merchants/${missing}/offers`, {
        title: 't',
        cashbackRateBps: 1,
        brandedRateBps: 0,
        startsAt: daysFromNow(0),
      }),
      404,
      'merchant_not_found',
    );
    const merchant = await createMerchant(app);
    const offerOfOther = await createOffer(app, (await createMerchant(app)).id);
    assertError(
      await app.operator('PATCH', `/admin/v1/merchants/${merchant.id}/offers/${offerOfOther.id}`, { title: 'x' }),
      404,
      'offer_not_found',
    );
    assertError(await app.operator('GET', '/admin/v1/merchants/mp_nope'), 400, 'invalid_id');
    assertError(
      await app.operator('PATCH', `/admin/v1/merchants/${merchant.id}/offers/ofr_bad`, { title: 'x' }),
      400,
      'invalid_id',
    );
    assertError(await app.request('GET', '/admin/v1/merchants', { token: 'rwd_sk_not_the_operator' }), 401);
  });
});

function budgetUse(limitMinor: number, usedMinor: number, period: string) {
  return { limitMinor, usedMinor, remainingMinor: limitMinor - usedMinor, period };
}
