// Databases of their own, beside the run's, for tests that must see a whole table (migrations,
// every endpoint's sealing key): created empty on the run's server, dropped with it.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { testDatabaseUrl } from './env';

export async function freshDatabase(prefix: string): Promise<string> {
  const name = `${prefix}_${Date.now()}_${randomUUID().slice(0, 8)}`;
  const client = new pg.Client({ connectionString: testDatabaseUrl() });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(testDatabaseUrl());
  url.pathname = `/${name}`;
  return url.toString();
}
