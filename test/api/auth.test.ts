import assert from 'node:assert/strict';
import { startTestApp, newIssuer, assertError, OPERATOR_TOKEN, type TestApp } from '../helpers/app';
import { declaredRoutes, fillPath } from '../helpers/routes';

describe('authentication', () => {
  let app: TestApp;
  before(async () => (app = await startTestApp()));
  after(() => app.close());

  const issuerRoutes = declaredRoutes().filter((r) => r.auth === 'issuer');
  const operatorRoutes = declaredRoutes().filter((r) => r.auth === 'operator');

  it('covers issuer and operator routes', () => {
    assert.ok(issuerRoutes.length >= 6);
    assert.ok(operatorRoutes.length >= 6);
  });

  it('answers 401 missing_token on every issuer route without a token', async () => {
    for (const route of issuerRoutes) {
      assertError(
        await app.request(route.method.toUpperCase(), fillPath(route), { body: route.body ? {} : undefined }),
        401,
        'missing_token',
      );
    }
  });

  it('answers 401 invalid_token for malformed, unknown and operator tokens on every issuer route', async () => {
    const bad = [
      'Basic abc',
      'Bearer',
      'Bearer rwd_sk_short',
      `Bearer rwd_sk_${'A'.repeat(43)}`,
      `Bearer ${OPERATOR_TOKEN}`,
      'Bearer a b',
    ];
    for (const route of issuerRoutes) {
      for (const authorization of bad) {
        const res = await app.request(route.method.toUpperCase(), fillPath(route), { headers: { authorization } });
        assertError(res, 401, 'invalid_token');
        assert.equal(res.headers.get('www-authenticate'), 'Bearer');
      }
    }
  });

  it('answers 401 on every operator route for an issuer token or none', async () => {
    const issuer = await newIssuer(app);
    for (const route of operatorRoutes) {
      assertError(
        await app.request(route.method.toUpperCase(), fillPath(route), { token: issuer.token }),
        401,
        'invalid_token',
      );
      assertError(await app.request(route.method.toUpperCase(), fillPath(route)), 401, 'missing_token');
    }
  });

  it('stops accepting a token the moment it is revoked', async () => {
    const issuer = await newIssuer(app);
    const created = await app.operator('POST', `/admin/v1/issuers/${issuer.id}/tokens`, { label: 'second' });
    assert.equal(created.status, 201);
    const second = created.body.token;
    assert.equal(
      (await app.request('GET', `/api/v2/chg/chg_00000000-0000-0000-0000-000000000000`, { token: second })).status,
      404,
    );
    const revoked = await app.operator('DELETE', `/admin/v1/issuers/${issuer.id}/tokens/${created.body.id}`);
    assert.equal(revoked.status, 204);
    assertError(
      await app.request('GET', `/api/v2/chg/chg_00000000-0000-0000-0000-000000000000`, { token: second }),
      401,
      'invalid_token',
    );
    assert.equal(
      (await issuer.call('GET', `/api/v2/chg/chg_00000000-0000-0000-0000-000000000000`)).status,
      404,
      'other tokens still work',
    );
  });

  it('stores only a hash of each token', async () => {
    const issuer = await newIssuer(app);
    const rows = await app.db.apiToken.findMany({ where: { issuerId: issuer.id } });
    assert.equal(rows.length, 1);
    assert.notEqual(rows[0].tokenHash, issuer.token);
    assert.ok(!JSON.stringify(rows).includes(issuer.token));
  });
});
