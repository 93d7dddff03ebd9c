// Rate limits per issuer token: 429 rate_limited with Retry-After and the
// IETF RateLimit fields, per token, the operator's per-issuer override, ingestion counted in
// events, windows that refill, operator routes left alone, counters shared by the processes
// of a cluster, and the published defaults. The limits come in through deps, low, with a
// 10-second window so that no assertion depends on how fast the requests go.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import { startTestApp, newIssuer, assertError, type TestApp, type TestIssuer, type TestResponse } from '../helpers/app';
import { createRateLimiter, RateLimiter } from '../../api/middleware/rate-limit';
import { loadConfig, ConfigError } from '../../core/config';
import { groupBody } from '../helpers/groups';
import { cardOf, settledEvent } from '../helpers/events';
import { testDatabaseUrl } from '../helpers/env';
import { spawnApi, waitForReady } from '../helpers/api-process';
import { freePort } from '../helpers/ports';
import { withSharedPartsInlined } from '../helpers/openapi-refs';
import { listenForAuthChanges, TokenCache } from '../../api/middleware/token-cache';
import { createLogger } from '../../core/logger';
import { hashToken } from '../../core/tokens';

const MISSING_GROUP = '/api/v2/chg/chg_00000000-0000-0000-0000-000000000000';
// 2 requests/s and 4 events/s over 10-second windows: quotas of 20 requests and 40 events.
const LIMITS = { requestsPerSecond: 2, eventsPerSecond: 4, windowSeconds: 10 };

/** The items of a RateLimit or RateLimit-Policy field, by policy name. */
function items(res: TestResponse, field: string): Record<string, Record<string, number>> {
  const value = res.headers.get(field);
  assert.ok(value, `${field} missing`);
  const out: Record<string, Record<string, number>> = {};
  for (const item of value.split(', ')) {
    const [name, ...params] = item.split(';');
    assert.match(name, /^"[a-z]+"$/, item);
    out[JSON.parse(name)] = Object.fromEntries(params.map((p) => [p.split('=')[0], Number(p.split('=')[1])]));
  }
  return out;
}

async function spend(issuer: TestIssuer, requests: number): Promise<TestResponse> {
  let last: TestResponse | undefined;
  for (let i = 0; i < requests; i++) {
    last = await issuer.call('GET', MISSING_GROUP);
    assert.equal(last.status, 404, `request ${i + 1}: ${last.text}`);
  }
  return last!;
}

function assertRefused(res: TestResponse, reasonCode: string): void {
  assertError(res, 429, reasonCode);
  assert.equal(res.body.name, 'rate_limited');
  assert.equal(res.body.code, 42900);
  const retryAfter = Number(res.headers.get('retry-after'));
  assert.ok(
    Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= LIMITS.windowSeconds,
    `Retry-After ${res.headers.get('retry-after')}`,
  );
  assert.equal(res.body.details.retryAfterSeconds, retryAfter);
  assert.equal(res.body.details.windowSeconds, LIMITS.windowSeconds);
}

describe('api/middleware/rate-limit', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ rateLimiter: createRateLimiter(LIMITS, { shared: false }) });
  });
  after(() => app.close());

  it('refuses the request over the limit with 429 rate_limited, Retry-After and the RateLimit fields', async () => {
    const issuer = await newIssuer(app);
    const first = await issuer.call('GET', MISSING_GROUP);
    assert.equal(first.headers.get('ratelimit-policy'), '"default";q=20;w=10');
    assert.match(first.headers.get('ratelimit')!, /^"default";r=19;t=([1-9]|10)$/);
    assert.equal(items(await spend(issuer, 19), 'RateLimit').default.r, 0);

    const refused = await issuer.call('GET', MISSING_GROUP);
    assertRefused(refused, 'request_rate_exceeded');
    assert.deepEqual(
      { ...refused.body.details, retryAfterSeconds: 0 },
      { policy: 'default', limit: 20, windowSeconds: 10, retryAfterSeconds: 0 },
    );
    const limit = items(refused, 'RateLimit').default;
    assert.equal(limit.r, 0);
    assert.equal(
      limit.t,
      Number(refused.headers.get('retry-after')),
      'Retry-After is the reset of the exceeded policy',
    );
    assert.deepEqual(items(refused, 'RateLimit-Policy'), { default: { q: 20, w: 10 } });
  });

  it('counts per token: another issuer and another token of the same issuer keep their own quota', async () => {
    const issuer = await newIssuer(app);
    await spend(issuer, 20);
    assertRefused(await issuer.call('GET', MISSING_GROUP), 'request_rate_exceeded');

    const other = await newIssuer(app);
    const res = await other.call('GET', MISSING_GROUP);
    assert.equal(res.status, 404);
    assert.equal(items(res, 'RateLimit').default.r, 19);

    const second = (await app.operator('POST', `/admin/v1/issuers/${issuer.id}/tokens`, {})).body;
    const bySecond = await app.request('GET', MISSING_GROUP, { token: second.token });
    assert.equal(bySecond.status, 404);
    assert.equal(items(bySecond, 'RateLimit').default.r, 19);
  });

  it("applies the operator's per-issuer override from the next request, audited, and null restores the default", async () => {
    const issuer = await newIssuer(app);
    const lowered = await app.operator('PATCH', `/admin/v1/issuers/${issuer.id}`, {
      rateLimit: { requestsPerSecond: 1 },
    });
    assert.equal(lowered.status, 200, lowered.text);
    assert.deepEqual(lowered.body.rateLimit, { requestsPerSecond: 1, eventsPerSecond: null });
    assert.deepEqual((await app.operator('GET', `/admin/v1/issuers/${issuer.id}`)).body.rateLimit, {
      requestsPerSecond: 1,
      eventsPerSecond: null,
    });

    const last = await spend(issuer, 10);
    assert.deepEqual(items(last, 'RateLimit-Policy'), { default: { q: 10, w: 10 } });
    assertRefused(await issuer.call('GET', MISSING_GROUP), 'request_rate_exceeded');

    // Raised: the same window goes on, now against 30 (11 requests counted so far).
    await app.operator('PATCH', `/admin/v1/issuers/${issuer.id}`, {
      rateLimit: { requestsPerSecond: 3, eventsPerSecond: 500 },
    });
    const raised = await issuer.call('GET', MISSING_GROUP);
    assert.equal(raised.status, 404);
    assert.deepEqual(items(raised, 'RateLimit-Policy'), { default: { q: 30, w: 10 } });
    assert.equal(items(raised, 'RateLimit').default.r, 18);

    const reset = await app.operator('PATCH', `/admin/v1/issuers/${issuer.id}`, { rateLimit: null });
    assert.deepEqual(reset.body.rateLimit, { requestsPerSecond: null, eventsPerSecond: null });
    const byDefault = await issuer.call('GET', MISSING_GROUP);
    assert.deepEqual(items(byDefault, 'RateLimit-Policy'), { default: { q: 20, w: 10 } });
    assert.equal(items(byDefault, 'RateLimit').default.r, 7);

    const audit = await app.db.operatorAuditLog.findMany({ where: { targetId: issuer.id, action: 'issuer.update' } });
    // jsonb orders keys by length, then bytes.
    const audited = audit.map((a) => JSON.stringify((a.details as any).rateLimit)).sort();
    assert.deepEqual(
      audited,
      ['null', '{"requestsPerSecond":1}', '{"eventsPerSecond":500,"requestsPerSecond":3}'].sort(),
    );
    for (const bad of [{ requestsPerSecond: 0 }, { requestsPerSecond: 1.5 }, {}, { burst: 3 }]) {
      assertError(
        await app.operator('PATCH', `/admin/v1/issuers/${issuer.id}`, { rateLimit: bad }),
        400,
        'invalid_body',
      );
    }
  });

  it('carries the override in the token cache: a process that cached the token applies a change at once', async () => {
    const cache = new TokenCache();
    const listener = listenForAuthChanges(testDatabaseUrl(), cache, createLogger('silent'));
    const cached = await startTestApp({ tokenCache: cache, rateLimiter: createRateLimiter(LIMITS, { shared: false }) });
    try {
      for (let i = 0; i < 100 && !(cache as any).listening; i++) await new Promise((r) => setTimeout(r, 50));
      const issuer = await newIssuer(cached);
      await cached.request('GET', MISSING_GROUP, { token: issuer.token });
      assert.deepEqual(cache.get(hashToken(issuer.token), Date.now())?.rateLimits, {
        requestsPerSecond: null,
        eventsPerSecond: null,
      });
      await cached.operator('PATCH', `/admin/v1/issuers/${issuer.id}`, { rateLimit: { requestsPerSecond: 5 } });
      const res = await cached.request('GET', MISSING_GROUP, { token: issuer.token });
      assert.deepEqual(items(res, 'RateLimit-Policy'), { default: { q: 50, w: 10 } });
      // The PATCH's own eviction notice can arrive after that request refilled the entry and
      // evict it again: absent is fine (the next request reloads), a stale limit is not.
      const entry = cache.get(hashToken(issuer.token), Date.now());
      if (entry) assert.deepEqual(entry.rateLimits, { requestsPerSecond: 5, eventsPerSecond: null });
    } finally {
      await listener.close();
      await cached.close();
    }
  });

  it('counts ingestion in events: a batch over the remaining quota is refused whole, one over a whole window is told so', async () => {
    const issuer = await newIssuer(app);
    const card = cardOf((await issuer.call('POST', '/api/v2/chg', groupBody())).body);
    const batch = (n: number) => Array.from({ length: n }, () => settledEvent(card));
    const stored = () => app.db.ingestedEvent.count({ where: { issuerId: issuer.id } });

    const accepted = await issuer.call('POST', '/api/v1/incoming-txn', batch(30));
    assert.equal(accepted.status, 204, accepted.text);
    assert.deepEqual(items(accepted, 'RateLimit-Policy'), { default: { q: 20, w: 10 }, events: { q: 40, w: 10 } });
    assert.equal(items(accepted, 'RateLimit').events.r, 10);
    assert.equal(items(accepted, 'RateLimit').default.r, 18, 'the request counts too');

    const refused = await issuer.call('POST', '/api/v1/incoming-txn', batch(20));
    assertRefused(refused, 'event_rate_exceeded');
    assert.deepEqual(
      { ...refused.body.details, retryAfterSeconds: 0 },
      { policy: 'events', limit: 40, windowSeconds: 10, retryAfterSeconds: 0, events: 20 },
    );
    assert.equal(items(refused, 'RateLimit').events.r, 0);
    assert.equal(await stored(), 30, 'none of the refused batch stored');

    const fresh = await newIssuer(app);
    const tooBig = await fresh.call(
      'POST',
      '/api/v1/incoming-auth',
      Array.from({ length: 50 }, () => ({})),
    );
    assertRefused(tooBig, 'batch_exceeds_event_limit');
    assert.equal(tooBig.body.details.limit, 40);
    assert.equal(tooBig.body.details.events, 50);
  });

  it('leaves operator, health and documentation routes unlimited, also for an issuer over its limit', async () => {
    const issuer = await newIssuer(app);
    await spend(issuer, 20);
    assertRefused(await issuer.call('GET', MISSING_GROUP), 'request_rate_exceeded');
    for (let i = 0; i < 25; i++) {
      const res = await app.operator('GET', `/admin/v1/issuers/${issuer.id}`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('ratelimit'), null);
    }
    for (const path of ['/healthz', '/openapi.json']) {
      const res = await app.request('GET', path);
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get('ratelimit'), null, path);
    }
  });

  it('refills the quota when the window ends', async () => {
    const quick = await startTestApp({
      rateLimiter: createRateLimiter({ requestsPerSecond: 2, eventsPerSecond: 4, windowSeconds: 1 }, { shared: false }),
    });
    try {
      const issuer = await newIssuer(quick);
      // Spend until refused (bounded): however slow the machine, a refusal comes within q + 1 requests of a window.
      let refused: TestResponse | undefined;
      for (let i = 0; i < 50 && !refused; i++) {
        const res = await issuer.call('GET', MISSING_GROUP);
        if (res.status === 429) refused = res;
      }
      assert.ok(refused, 'never refused');
      await new Promise((r) => setTimeout(r, Number(refused!.headers.get('retry-after')) * 1000 + 200));
      const after = await issuer.call('GET', MISSING_GROUP);
      assert.equal(after.status, 404);
      assert.equal(items(after, 'RateLimit').default.r, 1, 'a new window');
    } finally {
      await quick.close();
    }
  });

  it('lets requests through when its counters cannot answer', async () => {
    const broken = {
      consume: () => Promise.reject(new Error('rate-limit counters: no reply from the primary within 1000 ms')),
    } as never;
    const failing = await startTestApp({ rateLimiter: new RateLimiter(LIMITS, { default: broken, events: broken }) });
    try {
      const issuer = await newIssuer(failing);
      const res = await issuer.call('GET', MISSING_GROUP);
      assert.equal(res.status, 404);
      assert.equal(res.headers.get('ratelimit'), null);
    } finally {
      await failing.close();
    }
  });

  it('publishes the limits in /openapi.json: 429 with its headers on every issuer route, events/s on ingestion', async () => {
    const published = (await app.request('GET', '/openapi.json')).body;
    for (const header of ['RateLimit', 'RateLimit-Policy', 'Retry-After'])
      assert.ok(published.components.headers[header], header);
    const doc = withSharedPartsInlined(published);
    assert.match(doc.info.description, /2 requests\/s and, on ingestion, 4 events\/s, counted in windows of 10 s/);
    let issuerRoutes = 0;
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        const limited = (op.security ?? []).some((s: object) => 'IssuerApiToken' in s);
        const tooMany = op.responses['429'];
        if (!limited) {
          assert.equal(tooMany, undefined, `${method} ${path}`);
          continue;
        }
        issuerRoutes++;
        assert.ok(tooMany, `${method} ${path} lacks 429`);
        assert.equal(tooMany.content['application/json'].schema.$ref, '#/components/schemas/Error');
        assert.deepEqual(Object.keys(tooMany.headers).sort(), [
          'RateLimit',
          'RateLimit-Policy',
          'Retry-After',
          'X-Request-Id',
        ]);
        for (const [status, response] of Object.entries<any>(op.responses)) {
          if (Number(status) < 400) assert.ok(response.headers?.RateLimit, `${method} ${path} ${status}`);
        }
      }
    }
    assert.ok(issuerRoutes > 20, String(issuerRoutes));
    for (const path of ['/api/v1/incoming-auth', '/api/v1/incoming-txn']) {
      assert.match(doc.paths[path].post.description, /events per second/);
      assert.match(doc.paths[path].post.responses['429'].description, /batch_exceeds_event_limit/);
    }
    const patch = doc.paths['/admin/v1/issuers/{issuerId}'].patch;
    assert.ok(patch.requestBody.content['application/json'].schema.properties.rateLimit);
  });
});

describe('rate limits across the processes of a cluster', function () {
  this.timeout(120_000);
  let api: ChildProcess | undefined;
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => {
    if (api && api.exitCode === null) {
      const exited = new Promise((r) => api!.once('exit', r));
      api.kill('SIGTERM');
      await exited;
    }
    await app.close();
  });

  it('shares the counters of every API process (held by the primary), so a token gets its quota once per host', async () => {
    const port = await freePort();
    api = spawnApi(port, `rate-limit-${port}`, {
      API_PROCESSES: '2',
      RATE_LIMIT_REQUESTS_PER_SECOND: '1',
      RATE_LIMIT_WINDOW_SECONDS: '30',
    });
    await waitForReady(`http://127.0.0.1:${port}`, api);
    const issuer = await newIssuer(app);
    // A new connection each time: the cluster hands connections to its processes in turn, so
    // each process alone sees about half the requests and would let all 31 through.
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) statuses.push((await getOnNewConnection(port, MISSING_GROUP, issuer.token)).status);
    assert.deepEqual(statuses.slice(0, 30), Array(30).fill(404));
    assert.equal(statuses[30], 429);
  });
});

function getOnNewConnection(port: number, path: string, token: string): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        agent: false,
        headers: { authorization: `Bearer ${token}`, connection: 'close' },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('core/config rate limits', () => {
  it('publishes defaults of 100 requests/s and 2,000 events/s per token over 1-second windows', () => {
    assert.deepEqual(loadConfig({}).rateLimits, { requestsPerSecond: 100, eventsPerSecond: 2000, windowSeconds: 1 });
    assert.deepEqual(
      loadConfig({
        RATE_LIMIT_REQUESTS_PER_SECOND: '5',
        RATE_LIMIT_EVENTS_PER_SECOND: '50',
        RATE_LIMIT_WINDOW_SECONDS: '10',
      }).rateLimits,
      {
        requestsPerSecond: 5,
        eventsPerSecond: 50,
        windowSeconds: 10,
      },
    );
  });

  it('names every bad rate-limit variable', () => {
    try {
      loadConfig({
        RATE_LIMIT_REQUESTS_PER_SECOND: '0',
        RATE_LIMIT_EVENTS_PER_SECOND: 'many',
        RATE_LIMIT_WINDOW_SECONDS: '61',
      });
      assert.fail('expected a ConfigError');
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.problems.length, 3);
      for (const name of [
        'RATE_LIMIT_REQUESTS_PER_SECOND',
        'RATE_LIMIT_EVENTS_PER_SECOND',
        'RATE_LIMIT_WINDOW_SECONDS',
      ])
        assert.ok(err.message.includes(name), name);
    }
  });
});
