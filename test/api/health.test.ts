import assert from 'node:assert/strict';
import { startTestApp, assertError, type TestApp } from '../helpers/app';

describe('health routes', () => {
  let app: TestApp;
  before(async () => (app = await startTestApp()));
  after(() => app.close());

  it('answers /healthz without a token', async () => {
    const res = await app.request('GET', '/healthz');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: 'ok' });
  });

  it('answers /readyz 200 when PostgreSQL and Temporal are reachable', async () => {
    const res = await app.request('GET', '/readyz');
    assert.equal(res.status, 200);
    assert.equal(res.body.database, 'ok');
    assert.equal(res.body.temporal, 'ok');
  });

  it('answers /readyz 503 workflow_engine_unavailable when Temporal is not reachable', async () => {
    const broken = await startTestApp({ temporalHealth: async () => Promise.reject(new Error('down')) });
    try {
      const res = await broken.request('GET', '/readyz');
      assertError(res, 503, 'workflow_engine_unavailable');
      assert.ok(res.headers.get('retry-after'));
    } finally {
      await broken.close();
    }
  });

  it('echoes a caller X-Request-Id and makes one otherwise', async () => {
    const echoed = await app.request('GET', '/healthz', { headers: { 'X-Request-Id': 'abc-123' } });
    assert.equal(echoed.headers.get('x-request-id'), 'abc-123');
    const made = await app.request('GET', '/healthz');
    assert.match(made.headers.get('x-request-id') ?? '', /^req_/);
  });
});
