// Ends chosen PostgreSQL connections of the run's database the way a restart or a failover does
// (pg_terminate_backend), and holds table locks that stop a connection at a known statement, so a
// test can cut a connection mid-transaction, mid-export or while it sits idle.
import assert from 'node:assert/strict';
import pg from 'pg';
import { testDatabaseUrl } from './env';

/** The run's database URL with an application_name, so a test can find that pool's connections. */
export function namedDatabaseUrl(applicationName: string): string {
  const url = new URL(testDatabaseUrl());
  url.searchParams.set('application_name', applicationName);
  return url.toString();
}

export async function adminClient(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: testDatabaseUrl() });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** A connection holding `LOCK TABLE ... IN <mode>` until release(), to stop writers at that table. */
export async function lockTable(
  table: string,
  mode = 'SHARE ROW EXCLUSIVE',
): Promise<{
  pid: number;
  release(): Promise<void>;
}> {
  const client = await adminClient();
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  await client.query('BEGIN');
  await client.query(`LOCK TABLE ${table} IN ${mode} MODE`);
  return {
    pid: rows[0].pid,
    async release() {
      await client.query('ROLLBACK');
      await client.end();
    },
  };
}

/** A connection holding one row of `table` FOR UPDATE until release(), to stop the next locker of it. */
export async function lockRow(table: string, id: string): Promise<{ pid: number; release(): Promise<void> }> {
  const client = await adminClient();
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  await client.query('BEGIN');
  await client.query(`SELECT 1 FROM ${table} WHERE id = $1 FOR UPDATE`, [id]);
  return {
    pid: rows[0].pid,
    async release() {
      await client.query('ROLLBACK');
      await client.end();
    },
  };
}

/** Waits (bounded) until a connection waits for `holderPid`'s lock, then terminates every such connection. */
export async function terminateBlockedBy(holderPid: number): Promise<number> {
  return terminateWhen(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))`,
    [holderPid],
  );
}

/** Waits (bounded) until the named pool has a connection in `state`, then terminates all of them. */
export async function terminateApplication(applicationName: string, state: string): Promise<number> {
  return terminateWhen(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE application_name = $1 AND state = $2 AND pid <> pg_backend_pid()`,
    [applicationName, state],
  );
}

/** Waits (bounded) until the named pool runs or holds open a statement matching `like`, then ends it. */
export async function terminateApplicationQuery(applicationName: string, like: string): Promise<number> {
  return terminateWhen(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE application_name = $1 AND state <> 'idle' AND query LIKE $2 AND pid <> pg_backend_pid()`,
    [applicationName, like],
  );
}

async function terminateWhen(sql: string, values: unknown[]): Promise<number> {
  const client = await adminClient();
  try {
    for (let attempt = 0; attempt < 200; attempt++) {
      const { rowCount } = await client.query(sql, values);
      if (rowCount) return rowCount;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.fail('no connection to terminate appeared');
  } finally {
    await client.end();
  }
}
