import assert from 'node:assert/strict';
import { startTestApp, newIssuer, assertError, type TestApp } from '../helpers/app';
import { createDb, type Db } from '../../prisma/client';
import { freePort } from '../helpers/ports';

describe('error handling', () => {
  it('turns an unexpected exception into a 500 that reveals nothing internal', async () => {
    const real = await startTestApp();
    const issuer = await newIssuer(real);
    await real.close();
    const db = createDb(process.env.TEST_RUN_DATABASE_URL!, 2);
    // Every group read blows up with an error full of internals.
    const broken = new Proxy(db, {
      get(target, prop, receiver) {
        if (prop === 'cardholderGroup') {
          return { findFirst: async () => Promise.reject(new Error('boom at SELECT secret FROM internal_host:5432')) };
        }
        return Reflect.get(target, prop, receiver);
      },
    }) as Db;
    const app = await startTestApp({ db: broken });
    try {
      const res = await app.request('GET', '/api/v2/chg/chg_00000000-0000-0000-0000-000000000000', {
        token: issuer.token,
      });
      assertError(res, 500);
      assert.equal(res.body.name, 'internal_error');
      assert.ok(!/boom|SELECT|internal_host/.test(res.text));
    } finally {
      await app.close();
      await db.$disconnect();
    }
  });

  it('answers 503 database_unavailable when PostgreSQL cannot be reached', async () => {
    const db = createDb(`postgresql://postgres:postgres@127.0.0.1:${await freePort()}/none`, 1);
    const app: TestApp = await startTestApp({ db, temporalHealth: async () => undefined });
    try {
      const res = await app.request('GET', '/api/v2/chg/chg_00000000-0000-0000-0000-000000000000', {
        token: `rwd_sk_${'a'.repeat(43)}`,
      });
      assertError(res, 503, 'database_unavailable');
      assert.ok(res.headers.get('retry-after'));
      assertError(await app.request('GET', '/readyz'), 503, 'database_unavailable');
    } finally {
      await app.close();
      await db.$disconnect();
    }
  });
});
