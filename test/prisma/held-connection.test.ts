// A raw-SQL transaction whose connection the server ends (pg_terminate_backend) fails alone with
// an error classified database_unavailable, whether the connection was cut mid-statement or while
// it sat idle between two statements; the process hears the connection's 'error' (an unheard
// one would end the test run) and the pool hands out a working connection next.
import assert from 'node:assert/strict';
import { classifyFailure } from '../../core/failures';
import { createDb, type Db } from '../../prisma/client';
import { DatabaseConnectionLost } from '../../prisma/held-connection';
import { sqlTransaction } from '../../prisma/sql-transaction';
import { adminClient, namedDatabaseUrl } from '../helpers/backends';

describe('sqlTransaction on a connection the server ends', () => {
  let db: Db;

  before(() => {
    // A pool of one: the statement after the loss only runs on a connection opened anew.
    db = createDb(namedDatabaseUrl('held_connection_test'), 1);
  });
  after(async () => {
    await db.$disconnect();
  });

  const terminate = async (pid: number) => {
    const admin = await adminClient();
    try {
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    } finally {
      await admin.end();
    }
  };

  it('fails with database_unavailable when the connection is ended mid-statement', async () => {
    const failure = await sqlTransaction(db, async (tx) => {
      const [{ pid }] = await tx.$queryRaw<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
      const endSoon = async () => {
        await new Promise((resolve) => setTimeout(resolve, 100));
        await terminate(pid);
      };
      await Promise.all([tx.$queryRaw`SELECT pg_sleep(30)`, endSoon()]);
    }).then(
      () => assert.fail('the transaction committed'),
      (err: unknown) => err,
    );
    assert.equal(classifyFailure(failure), 'database_unavailable');
    const [{ ok }] = await sqlTransaction(db, async (tx) => tx.$queryRaw<{ ok: number }[]>`SELECT 1 AS ok`);
    assert.equal(ok, 1);
  });

  it('fails with DatabaseConnectionLost when the connection is ended between two statements', async () => {
    const failure = await sqlTransaction(db, async (tx) => {
      const [{ pid }] = await tx.$queryRaw<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
      await terminate(pid);
      // The client hears the loss as an 'error' event while no statement runs.
      await new Promise((resolve) => setTimeout(resolve, 200));
      await tx.$queryRaw`SELECT 1`;
    }).then(
      () => assert.fail('the transaction committed'),
      (err: unknown) => err,
    );
    assert.ok(failure instanceof DatabaseConnectionLost, String(failure));
    assert.equal(classifyFailure(failure), 'database_unavailable');
    const [{ ok }] = await sqlTransaction(db, async (tx) => tx.$queryRaw<{ ok: number }[]>`SELECT 1 AS ok`);
    assert.equal(ok, 1);
  });
});
