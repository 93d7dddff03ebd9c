// Once per test run: a real PostgreSQL (embedded, in a temporary folder, unless
// TEST_DATABASE_URL is given) with a fresh database migrated from prisma/migrations, and a
// real Temporal dev server (in memory, unless TEST_TEMPORAL_ADDRESS is given).
// Tests read the addresses from process.env (see test/helpers/env.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { migrate } from '../../prisma/migrate';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../../scripts/lib/embedded-postgres';
import { startTemporalDevServer, type TemporalDevServerHandle } from '../../scripts/lib/temporal-dev-server';
import { freePort } from './ports';

let postgres: EmbeddedPostgresHandle | undefined;
let temporal: TemporalDevServerHandle | undefined;
let tempDir: string | undefined;

export async function mochaGlobalSetup(): Promise<void> {
  tempDir = mkdtempSync(join(tmpdir(), 'rewards-test-'));
  let serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) {
    postgres = await startEmbeddedPostgres({
      dataDir: join(tempDir, 'postgres'),
      port: await freePort(),
      persistent: false,
    });
    serverUrl = postgres.databaseUrl('postgres');
  }
  const databaseUrl = await createRunDatabase(serverUrl);
  await migrate(databaseUrl);
  process.env.TEST_RUN_DATABASE_URL = databaseUrl;

  if (!process.env.TEST_TEMPORAL_ADDRESS) {
    temporal = await startTemporalDevServer({ port: await freePort() });
    process.env.TEST_TEMPORAL_ADDRESS = temporal.address;
  }
}

export async function mochaGlobalTeardown(): Promise<void> {
  await temporal?.stop();
  await postgres?.stop();
  if (tempDir) rmSync(tempDir, { recursive: true, force: true });
}

/** Each run gets its own database, so runs never see each other's rows. */
async function createRunDatabase(serverUrl: string): Promise<string> {
  const name = `rewards_test_${Date.now()}_${process.pid}`;
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
