// The benchmark's own stack, built like `npm start` but throw-away: embedded PostgreSQL in a
// temporary folder and an in-memory Temporal dev server, both on free ports, a freshly
// migrated database, then the API and the worker as separate Node processes (as in
// production and `npm start`), so their CPU use is visible and they compete like the
// real thing on 2 cores. Nothing of .data/ is touched.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { migrate } from '../prisma/migrate';
import { startEmbeddedPostgres } from '../scripts/lib/embedded-postgres';
import { startTemporalDevServer, stopChild } from '../scripts/lib/temporal-dev-server';
import { freePort } from '../test/helpers/ports';
import { generateKeyRingEntry, parseKeyRing, type KeyRing } from '../core/crypto/key-ring';

const ROOT = resolve(__dirname, '..');

export interface BenchStack {
  apiUrl: string;
  databaseUrl: string;
  temporalAddress: string;
  operatorToken: string;
  /** WEBHOOK_SECRET_KEYS of the API and the worker: seals secrets of endpoints a phase writes itself. */
  webhookSecretKeys: KeyRing;
  /** Starts another Node process over the same database and Temporal server. */
  spawnNode(entry: string, extraEnv?: Record<string, string>): ChildProcess;
  /** The worker process (worker/main.ts), to pause it while a phase measures the API alone. */
  worker: ChildProcess;
  /** The API process (api/server.ts); the fault script kills it. */
  api: ChildProcess;
  stop(): Promise<void>;
}

// pg_stat_statements loaded, and idle from the migration on (idleStatementCounting): the
// notices phase turns statement counting on for its own run only (bench/notices.ts), so no
// other phase pays for it.
const PG_SETTINGS = ['shared_preload_libraries=pg_stat_statements'];

export async function startBenchStack(log: (line: string) => void): Promise<BenchStack> {
  const tempDir = mkdtempSync(join(tmpdir(), 'rewards-bench-'));
  const stops: Array<() => Promise<void>> = [async () => rmSync(tempDir, { recursive: true, force: true })];
  const children: ChildProcess[] = [];
  const stop = async () => {
    // A paused child (the worker during the ingestion phase) would not act on SIGTERM.
    for (const c of children) if (c.exitCode === null) c.kill('SIGCONT');
    // 20 s: the API exits by itself within 17 s (api/shutdown.ts) and writes its profile.
    await Promise.all(children.map((c) => stopChild(c, 20_000)));
    for (const s of stops) await s().catch((err) => log(`stop failed: ${String(err)}`));
  };
  try {
    log('starting embedded PostgreSQL');
    // BENCH_PG_LOG=<file> keeps PostgreSQL's log (e.g. to read a deadlock's details).
    const pgLog = process.env.BENCH_PG_LOG;
    const pg = await startEmbeddedPostgres({
      dataDir: join(tempDir, 'postgres'),
      port: await freePort(),
      persistent: false,
      settings: PG_SETTINGS,
      log: pgLog ? (line) => appendFileSync(pgLog, line.endsWith('\n') ? line : `${line}\n`) : undefined,
    });
    stops.unshift(() => pg.stop());
    await pg.createDatabase('rewards_bench');
    const databaseUrl = pg.databaseUrl('rewards_bench');
    await migrate(databaseUrl);
    await idleStatementCounting(databaseUrl);

    log('starting the Temporal dev server (in memory)');
    const temporal = await startTemporalDevServer({ cli: process.env.TEMPORAL_CLI, port: await freePort() });
    stops.unshift(() => temporal.stop());

    const operatorToken = `op_bench_${randomBytes(24).toString('hex')}`;
    // A throw-away key: the bench's endpoints live as long as its database.
    const secretKeys = generateKeyRingEntry('bench');
    const port = await freePort();
    const env = childEnv({ databaseUrl, temporalAddress: temporal.address, operatorToken, secretKeys, port });
    // BENCH_PROFILE_DIR=<dir> writes a V8 CPU profile of each child process there at its exit.
    const profile = process.env.BENCH_PROFILE_DIR
      ? ['--cpu-prof', '--cpu-prof-dir', resolve(process.env.BENCH_PROFILE_DIR)]
      : [];
    const spawnNode = (entry: string, extraEnv: Record<string, string> = {}) => {
      const child = spawn(process.execPath, [...profile, '--import', 'tsx', join(ROOT, entry)], {
        cwd: ROOT,
        env: { ...env, ...extraEnv },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      children.push(child);
      return child;
    };
    const api = spawnNode('api/server.ts');
    // The real worker process; its metrics ports are fixed by default, so off here (a second
    // stack on the machine would collide on them).
    const worker = spawnNode('worker/main.ts', { WORKER_METRICS_PORT: '0', TEMPORAL_METRICS_PORT: '0' });
    const apiUrl = `http://127.0.0.1:${port}`;
    await waitForReady(apiUrl);
    const webhookSecretKeys = parseKeyRing('WEBHOOK_SECRET_KEYS', secretKeys).ring!;
    return {
      apiUrl,
      databaseUrl,
      temporalAddress: temporal.address,
      operatorToken,
      webhookSecretKeys,
      spawnNode,
      worker,
      api,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The environment of the API, the worker and the bench's other Node processes. */
function childEnv(s: {
  databaseUrl: string;
  temporalAddress: string;
  operatorToken: string;
  secretKeys: string;
  port: number;
}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: s.databaseUrl,
    TEMPORAL_ADDRESS: s.temporalAddress,
    OPERATOR_TOKEN: s.operatorToken,
    WEBHOOK_SECRET_KEYS: s.secretKeys,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    PORT: String(s.port),
    HOST: '127.0.0.1',
    // The bench's webhook receiver listens on loopback.
    WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'true',
    // The bench measures capacity, one token at thousands of requests and events a second:
    // the rate check still runs on every request (its cost is in the figures), its limits
    // out of reach. Set these to measure with the published defaults instead.
    RATE_LIMIT_REQUESTS_PER_SECOND: process.env.RATE_LIMIT_REQUESTS_PER_SECOND || '1000000',
    RATE_LIMIT_EVENTS_PER_SECOND: process.env.RATE_LIMIT_EVENTS_PER_SECOND || '10000000',
    // No load balancer in front: the API closes its port at once when the bench stops it.
    SHUTDOWN_DRAIN_DELAY: '0s',
  };
}

/**
 * pg_stat_statements tracks nothing until a phase says so: in postgresql.auto.conf, not on the
 * command line, so that ALTER SYSTEM and a reload can turn it on and off again.
 */
async function idleStatementCounting(databaseUrl: string): Promise<void> {
  const client = new PgClient({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`ALTER SYSTEM SET pg_stat_statements.track = 'none'`);
    await client.query('SELECT pg_reload_conf()');
  } finally {
    await client.end();
  }
}

// /readyz answers 200 once the API reaches PostgreSQL and Temporal; bounded at 60 s.
async function waitForReady(apiUrl: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const res = await fetch(`${apiUrl}/readyz`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`API at ${apiUrl} not ready within 60 s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Resolves once the child says it is polling (an IPC 'ready' message); bounded. */
export function childReady(child: ChildProcess, timeoutMs = 60_000): Promise<void> {
  return new Promise((resolveReady, reject) => {
    const timer = setTimeout(() => reject(new Error('child process not ready in time')), timeoutMs);
    child.once('exit', (code) => reject(new Error(`child process exited with ${code}`)));
    child.on('message', (m: unknown) => {
      if ((m as { ready?: boolean })?.ready) {
        clearTimeout(timer);
        resolveReady();
      }
    });
  });
}
