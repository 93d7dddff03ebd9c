// A statement PostgreSQL ends at statement_timeout is classified statement_timeout, through the
// Prisma driver adapter as it really reports it, and the API answers it 503 database_unavailable
// with Retry-After and a message saying what happened, never 500.
import assert from 'node:assert/strict';
import type { Context } from 'koa';
import { classifyFailure } from '../../core/failures';
import { createDb, type Db } from '../../prisma/client';
import { renderError } from '../../api/middleware/error-handler';
import { namedDatabaseUrl } from '../helpers/backends';

describe('a statement that runs past statement_timeout', () => {
  let db: Db;

  before(() => {
    db = createDb(namedDatabaseUrl('statement_timeout_test'), 1, {
      connectTimeoutMs: 2_000,
      statementTimeoutMs: 200,
      transactionTimeoutMs: 5_000,
    });
  });
  after(async () => {
    await db.$disconnect();
  });

  const timedOut = () =>
    db.$queryRaw`SELECT pg_sleep(3)`.then(
      () => assert.fail('the statement outlived its time-out'),
      (err: unknown) => err,
    );

  it('is classified statement_timeout, and the connection serves the next statement', async () => {
    const err = await timedOut();
    assert.equal(classifyFailure(err), 'statement_timeout');
    const [{ one }] = await db.$queryRaw<{ one: number }[]>`SELECT 1::int AS one`;
    assert.equal(one, 1);
  });

  it('answers 503 database_unavailable with Retry-After', async () => {
    const err = await timedOut();
    const headers: Record<string, string> = {};
    const ctx = { state: {}, set: (name: string, value: string) => (headers[name] = value) } as unknown as Context;
    renderError(ctx, err);
    assert.equal(ctx.status, 503);
    const body = ctx.body as { reasonCode: string; message: string };
    assert.equal(body.reasonCode, 'database_unavailable');
    assert.match(body.message, /statement time-out/);
    assert.equal(headers['Retry-After'], '5');
  });
});
