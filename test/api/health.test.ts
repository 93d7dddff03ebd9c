import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { Connection } from '@temporalio/client';
import { startTestApp, assertError, type TestApp } from '../helpers/app';
import { createDb } from '../../prisma/client';
import { createDraining } from '../../api/draining';
import { temporalProbe } from '../../api/health/readiness';
import { freePort } from '../helpers/ports';

// A probe with a 2 s time-out must see the 503: each check gets 1.5 s, all at once.
// 2.5 s leaves room for a loaded machine; before, an unreachable Temporal took about 20 s.
const READYZ_BOUND_MS = 2_500;

/** A port that accepts connections and never says a word: a hung PostgreSQL or Temporal. */
async function silentPort(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    close: () => {
      sockets.forEach((s) => s.destroy());
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

async function timedReadyz(app: TestApp) {
  const started = performance.now();
  const res = await app.request('GET', '/readyz');
  return { res, ms: performance.now() - started };
}

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
      assert.deepEqual(res.body.details, { database: 'ok', temporal: 'unreachable' });
    } finally {
      await broken.close();
    }
  });

  describe('/readyz within 2 s whatever is down', () => {
    // The probe's call goes on under its gRPC deadline after /readyz has answered, with one
    // retry at most pending; a connection closed under a pending retry throws from its timer.
    const connections: Connection[] = [];
    after(async () => {
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      await Promise.all(connections.map((c) => c.close()));
    });

    it('when nothing listens where Temporal should be (the real probe, over gRPC)', async () => {
      const connection = Connection.lazy({ address: `127.0.0.1:${await freePort()}` });
      connections.push(connection);
      const broken = await startTestApp({ temporalHealth: temporalProbe(connection) });
      try {
        const { res, ms } = await timedReadyz(broken);
        assertError(res, 503, 'workflow_engine_unavailable');
        assert.notEqual(res.body.details.temporal, 'ok');
        assert.ok(ms < READYZ_BOUND_MS, `answered after ${Math.round(ms)} ms`);
      } finally {
        await broken.close();
      }
    });

    it('when Temporal accepts the connection and never answers', async () => {
      const silent = await silentPort();
      const connection = Connection.lazy({ address: `127.0.0.1:${silent.port}` });
      connections.push(connection);
      const broken = await startTestApp({ temporalHealth: temporalProbe(connection) });
      try {
        const { res, ms } = await timedReadyz(broken);
        assertError(res, 503, 'workflow_engine_unavailable');
        assert.ok(ms < READYZ_BOUND_MS, `answered after ${Math.round(ms)} ms`);
      } finally {
        await broken.close();
        await silent.close();
      }
    });

    it('when PostgreSQL is down, naming the database', async () => {
      const db = createDb(`postgresql://postgres:postgres@127.0.0.1:${await freePort()}/none`, 1);
      const broken = await startTestApp({ db });
      try {
        const { res, ms } = await timedReadyz(broken);
        assertError(res, 503, 'database_unavailable');
        assert.deepEqual(res.body.details, { database: 'unreachable', temporal: 'ok' });
        assert.ok(ms < READYZ_BOUND_MS, `answered after ${Math.round(ms)} ms`);
      } finally {
        await broken.close();
        await db.$disconnect();
      }
    });

    it('when both hang: the checks run at once, so the answer takes one time-out, not two', async () => {
      const silent = await silentPort();
      const db = createDb(`postgresql://postgres:postgres@127.0.0.1:${silent.port}/none`, 1);
      const broken = await startTestApp({ db, temporalHealth: () => new Promise(() => undefined) });
      try {
        const { res, ms } = await timedReadyz(broken);
        assertError(res, 503, 'database_unavailable');
        assert.deepEqual(res.body.details, { database: 'timed_out', temporal: 'timed_out' });
        assert.ok(ms < READYZ_BOUND_MS, `answered after ${Math.round(ms)} ms`);
      } finally {
        await broken.close();
        // The pool waits for its connection attempt until the silent server lets it go.
        await silent.close();
        await db.$disconnect().catch(() => undefined);
      }
    });
  });

  it('answers /readyz 503 draining at once when the process starts shutting down, /healthz still 200', async () => {
    const draining = createDraining();
    // Checks that would hang show that draining does not wait for them.
    const drainingApp = await startTestApp({ draining, temporalHealth: () => new Promise(() => undefined) });
    try {
      draining.start();
      const { res, ms } = await timedReadyz(drainingApp);
      assertError(res, 503, 'draining');
      assert.ok(res.headers.get('retry-after'));
      assert.ok(ms < 500, `answered after ${Math.round(ms)} ms`);
      assert.equal((await drainingApp.request('GET', '/healthz')).status, 200);
    } finally {
      await drainingApp.close();
    }
  });

  it('echoes a caller X-Request-Id and makes one otherwise', async () => {
    const echoed = await app.request('GET', '/healthz', { headers: { 'X-Request-Id': 'abc-123' } });
    assert.equal(echoed.headers.get('x-request-id'), 'abc-123');
    const made = await app.request('GET', '/healthz');
    assert.match(made.headers.get('x-request-id') ?? '', /^req_/);
  });
});
