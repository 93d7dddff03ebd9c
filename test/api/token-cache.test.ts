// The token → issuer cache never outlives a revocation or an issuer change: the process
// that revokes forgets at once, every other process on the NOTIFY, and the cache is off
// whenever its LISTEN connection is.
import assert from 'node:assert/strict';
import { startTestApp, newIssuer, assertError, type TestApp } from '../helpers/app';
import { listenForAuthChanges, TokenCache } from '../../api/middleware/token-cache';
import { createLogger } from '../../core/logger';
import { hashToken } from '../../core/tokens';
import { testDatabaseUrl } from '../helpers/env';

const MISSING_GROUP = '/api/v2/chg/chg_00000000-0000-0000-0000-000000000000';

async function until(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`timed out waiting for ${what}`);
}

describe('api/middleware/token-cache', () => {
  const logger = createLogger('silent');
  let cacheA: TokenCache;
  let cacheB: TokenCache;
  let listeners: Array<{ close(): Promise<void> }>;
  let appA: TestApp;
  let appB: TestApp;

  before(async () => {
    cacheA = new TokenCache();
    cacheB = new TokenCache();
    listeners = [
      listenForAuthChanges(testDatabaseUrl(), cacheA, logger),
      listenForAuthChanges(testDatabaseUrl(), cacheB, logger),
    ];
    // Two API processes over one database, each with its own cache.
    appA = await startTestApp({ tokenCache: cacheA });
    appB = await startTestApp({ tokenCache: cacheB });
    await until(
      () => cacheA.get('x', 0) === undefined && (cacheA as any).listening && (cacheB as any).listening,
      'listeners',
    );
  });
  after(async () => {
    await Promise.all(listeners.map((l) => l.close()));
    await appA.close();
    await appB.close();
  });

  it('serves repeated requests from the cache', async () => {
    const issuer = await newIssuer(appA);
    assert.equal((await appB.request('GET', MISSING_GROUP, { token: issuer.token })).status, 404);
    assert.equal(cacheB.get(hashToken(issuer.token), Date.now())?.id, issuer.id);
  });

  it('rejects a revoked token at once in the revoking process and on the NOTIFY in the others', async () => {
    const issuer = await newIssuer(appA);
    const second = (await appA.operator('POST', `/admin/v1/issuers/${issuer.id}/tokens`, {})).body;
    for (const app of [appA, appB])
      assert.equal((await app.request('GET', MISSING_GROUP, { token: second.token })).status, 404);
    assert.ok(cacheB.get(hashToken(second.token), Date.now()), 'cached in B');
    assert.equal((await appA.operator('DELETE', `/admin/v1/issuers/${issuer.id}/tokens/${second.id}`)).status, 204);
    assertError(await appA.request('GET', MISSING_GROUP, { token: second.token }), 401, 'invalid_token');
    await until(() => cacheB.get(hashToken(second.token), Date.now()) === undefined, 'B to hear the revocation');
    assertError(await appB.request('GET', MISSING_GROUP, { token: second.token }), 401, 'invalid_token');
  });

  it('forgets an issuer whose settings changed', async () => {
    const issuer = await newIssuer(appA);
    await appB.request('GET', MISSING_GROUP, { token: issuer.token });
    assert.equal(cacheB.get(hashToken(issuer.token), Date.now())?.brandedAvailabilityDelayDays, 0);
    await appA.operator('PATCH', `/admin/v1/issuers/${issuer.id}`, { brandedAvailabilityDelayDays: 4 });
    await until(() => cacheB.get(hashToken(issuer.token), Date.now()) === undefined, 'B to forget the issuer');
    await appB.request('GET', MISSING_GROUP, { token: issuer.token });
    assert.equal(cacheB.get(hashToken(issuer.token), Date.now())?.brandedAvailabilityDelayDays, 4);
  });

  it('caches nothing while not listening, and entries expire', () => {
    const cache = new TokenCache(1000);
    const issuer = {
      id: 'iss_x',
      name: 'x',
      environment: 'sandbox' as const,
      brandedAvailabilityDelayDays: 0,
      tokenId: 'tok_x',
      rateLimits: { requestsPerSecond: null, eventsPerSecond: null },
      clockOffsetMs: 0,
      ingestionBacklogLimit: null,
    };
    cache.set('h', issuer, 0);
    assert.equal(cache.get('h', 0), undefined);
    cache.setListening(true);
    cache.set('h', issuer, 0);
    assert.equal(cache.get('h', 999)?.id, 'iss_x');
    assert.equal(cache.get('h', 1000), undefined, 'expired');
    cache.set('h', issuer, 0);
    cache.setListening(false);
    cache.setListening(true);
    assert.equal(cache.get('h', 1), undefined, 'a lost connection empties the cache');
  });
});
