// Another issuer's ids are answered exactly like missing ones (404), on every route that
// takes them, and nothing of the owner's data changes.
import assert from 'node:assert/strict';
import { startTestApp, newIssuer, assertError, type TestApp, type TestIssuer } from '../helpers/app';
import { groupBody } from '../helpers/groups';
import { declaredRoutes, fillPath } from '../helpers/routes';

describe('issuer isolation', () => {
  let app: TestApp;
  let owner: TestIssuer;
  let intruder: TestIssuer;
  let group: any;
  before(async () => {
    app = await startTestApp();
    owner = await newIssuer(app);
    intruder = await newIssuer(app);
    group = (await owner.call('POST', '/api/v2/chg', groupBody())).body;
  });
  after(() => app.close());

  it("answers 404 on every issuer route that takes a group id, given another issuer's ids", async () => {
    const ids = { chgId: group.id, cardholderId: group.cardholders[0].id, cardId: group.cardholders[0].cards[0].id };
    const routes = declaredRoutes().filter((r) => r.auth === 'issuer' && r.params && 'chgId' in r.params);
    assert.ok(routes.length >= 4);
    // A valid body for each route that takes one, so the request reaches the group lookup (a
    // body refused with 400 first would prove nothing about isolation).
    const validBodies: Record<string, unknown> = {
      activateMerchant: {},
      getTransactionRewardOverviews: { transactionIds: ['txn_00000000-0000-0000-0000-000000000000'] },
      createAdjustment: { balanceType: 'cashback', amountMinor: 100, reasonCode: 'goodwill' },
      fileClaim: { externalId: 'purchase-1', reason: 'missing_reward' },
      payOutGroup: { amountMinor: 100 },
      reportOfferImpressions: { impressions: [{ offerId: 'ofr_00000000-0000-0000-0000-000000000000' }] },
    };
    for (const route of routes) {
      assert.ok(
        !route.body || route.operationId in validBodies,
        `${route.operationId} takes a body: give it a valid one above`,
      );
      const res = await app.request(route.method.toUpperCase(), fillPath(route, ids), {
        token: intruder.token,
        body: validBodies[route.operationId],
        // Posting an adjustment requires one; a fresh key per request claims nothing of the owner's.
        headers: { 'Idempotency-Key': `isolation-${route.operationId}` },
      });
      assertError(res, 404);
      assert.match(res.body.message, /No /);
    }
  });

  it('gives the same answer for a foreign id as for a missing one', async () => {
    const foreign = await intruder.call('GET', `/api/v2/chg/${group.id}`);
    const missing = await intruder.call('GET', '/api/v2/chg/chg_00000000-0000-0000-0000-000000000000');
    assert.equal(foreign.status, missing.status);
    assert.equal(foreign.body.code, missing.body.code);
    assert.equal(foreign.body.reasonCode, missing.body.reasonCode);
  });

  it("leaves the owner's group untouched", async () => {
    const read = await owner.call('GET', `/api/v2/chg/${group.id}`);
    assert.equal(read.body.status, 'active');
    assert.deepEqual(read.body, group);
  });

  it('creates a separate group when another issuer upserts the same externalId', async () => {
    const res = await intruder.call('POST', '/api/v2/chg', { ...groupBody(), externalId: group.externalId });
    assert.equal(res.status, 201);
    assert.notEqual(res.body.id, group.id);
    assert.deepEqual((await owner.call('GET', `/api/v2/chg/${group.id}`)).body, group);
  });
});
