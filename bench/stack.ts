// The benchmark's own stack, built like `npm start` but throw-away: embedded PostgreSQL in a
// temporary folder and a Temporal dev server (its SQLite file in that folder, or in memory),
// both on free ports, a freshly migrated database, then the API and the worker as separate Node
// processes (as in production and `npm start`), so their CPU use is visible and they compete like
// the real thing on 2 cores. Nothing of .data/ is touched. They log at the service's default level
// (LOG_LEVEL unset: info, an access-log line per request), as `npm start` runs them, unless
// BENCH_LOG_LEVEL says otherwise; their stdout (pino's JSON, buffered as anywhere but a terminal)
// goes to a file, as a container runtime keeps it, not to the bench's report.
import { spawn, type ChildProcess } from 'node:child_process';
import {
  appendFileSync,
  closeSync,
  createReadStream,
  mkdtempSync,
  openSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { migrate } from '../prisma/migrate';
import { startEmbeddedPostgres } from '../scripts/lib/embedded-postgres';
import { startTemporalDevServer, stopChild } from '../scripts/lib/temporal-dev-server';
import { freePort } from '../test/helpers/ports';
import { generateKeyRingEntry, parseKeyRing, type KeyRing } from '../core/crypto/key-ring';
import { serviceLogLevel, type TemporalStore } from './config';

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
  /** LOG_LEVEL of the API and the worker (bench/config.ts, serviceLogLevel). */
  logLevel: string;
  /**
   * Stops the API and the worker and starts them again on the same port and database, with
   * these variables added to their environment (none: as at the start); resolves once the API
   * answers /readyz and the worker polls. `api` and `worker` then name the new processes.
   */
  restartService(extraEnv?: Record<string, string>): Promise<void>;
  /** Kills the worker at once (SIGKILL: no shutdown, activities cut mid-way), then starts another. */
  killWorker(): Promise<void>;
  /** How the Temporal dev server exited, if it died while the stack ran (a phase can record it). */
  temporalDied(): string | undefined;
  stop(): Promise<void>;
}

// pg_stat_statements loaded, and idle from the migration on (idleStatementCounting): the
// notices phase turns statement counting on for its own run only (bench/notices.ts), so no
// other phase pays for it.
const PG_SETTINGS = ['shared_preload_libraries=pg_stat_statements'];

/**
 * `temporalStore`: where the dev server keeps its state; in memory unless told (the fault
 * scenarios of scripts/faults.ts last minutes), on a file for the bench's whole runs (bench/config.ts).
 */
export async function startBenchStack(
  log: (line: string) => void,
  options: { temporalStore?: TemporalStore } = {},
): Promise<BenchStack> {
  const tempDir = mkdtempSync(join(tmpdir(), 'rewards-bench-'));
  const stops: Array<() => Promise<void>> = [async () => rmSync(tempDir, { recursive: true, force: true })];
  const processes = childProcesses(tempDir, log);
  stops.unshift(() => processes.closeLog());
  const stop = async () => {
    await processes.stop(processes.running());
    for (const s of stops) await s().catch((err) => log(`stop failed: ${String(err)}`));
  };
  try {
    const { databaseUrl, temporalAddress, temporalDied } = await startBackingServices(
      tempDir,
      options.temporalStore ?? 'memory',
      stops,
      log,
    );
    const operatorToken = `op_bench_${randomBytes(24).toString('hex')}`;
    // A throw-away key: the bench's endpoints live as long as its database.
    const secretKeys = generateKeyRingEntry('bench');
    const port = await freePort();
    const logLevel = serviceLogLevel();
    const env = childEnv({ databaseUrl, temporalAddress, operatorToken, secretKeys, port, logLevel });
    const spawnNode = (entry: string, extraEnv: Record<string, string> = {}) =>
      processes.spawn(entry, { ...env, ...extraEnv });
    const apiUrl = `http://127.0.0.1:${port}`;
    // The real worker process; its metrics ports are fixed by default, so off here (a second
    // stack on the machine would collide on them).
    const startWorker = (extraEnv: Record<string, string> = {}) =>
      spawnNode('worker/main.ts', { WORKER_METRICS_PORT: '0', TEMPORAL_METRICS_PORT: '0', ...extraEnv });
    const startService = (extraEnv: Record<string, string> = {}) => {
      const api = spawnNode('api/server.ts', extraEnv);
      return { api, worker: startWorker(extraEnv) };
    };
    const stack: BenchStack = {
      apiUrl,
      databaseUrl,
      temporalAddress,
      operatorToken,
      webhookSecretKeys: parseKeyRing('WEBHOOK_SECRET_KEYS', secretKeys).ring!,
      spawnNode,
      temporalDied,
      ...startService(),
      logLevel,
      async restartService(extraEnv = {}) {
        await processes.stop([stack.api, stack.worker]);
        const next = startService(extraEnv);
        Object.assign(stack, next);
        await Promise.all([waitForReady(apiUrl), childReady(next.worker)]);
      },
      async killWorker() {
        const killed = stack.worker;
        const exited = new Promise((resolve) => killed.once('exit', resolve));
        killed.kill('SIGKILL');
        await exited;
        await processes.stop([killed]);
        stack.worker = startWorker();
        await childReady(stack.worker);
      },
      stop,
    };
    await waitForReady(apiUrl);
    return stack;
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Embedded PostgreSQL, migrated, and the Temporal dev server; each stopped by `stops`. */
async function startBackingServices(
  tempDir: string,
  temporalStore: TemporalStore,
  stops: Array<() => Promise<void>>,
  log: (line: string) => void,
): Promise<{ databaseUrl: string; temporalAddress: string; temporalDied: () => string | undefined }> {
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

  // On a SQLite file with WAL, as `npm start` runs it: in memory, every workflow a run closes stays
  // in the server's process (the namespace keeps closed runs a day), about 80 KB each, in memory
  // mappings that reach the kernel's cap (vm.max_map_count) near 5.7 GiB, where whole runs' servers
  // crashed (docs/decisions/0048-bench-temporal-on-a-file.md).
  log(`starting the Temporal dev server (${temporalStore === 'file' ? 'SQLite file' : 'in memory'})`);
  const temporalOutput = lastWords(TEMPORAL_LINES_KEPT, process.env.BENCH_TEMPORAL_LOG);
  const temporal = await startTemporalDevServer({
    cli: process.env.TEMPORAL_CLI,
    port: await freePort(),
    dbFile: temporalStore === 'file' ? join(tempDir, 'temporal', 'temporal.db') : undefined,
    log: temporalOutput.add,
  });
  let stopping = false;
  stops.unshift(() => {
    stopping = true;
    return temporal.stop();
  });
  // A dev server that dies mid-run otherwise shows only as connection errors of the processes
  // that use it; its own last words say why.
  let died: string | undefined;
  void temporal.exited.then((how) => {
    if (stopping) return;
    died = how;
    log(`the Temporal dev server exited (${how}); its last words:\n${temporalOutput.text()}`);
  });
  return { databaseUrl, temporalAddress: temporal.address, temporalDied: () => died };
}

/** Lines the bench keeps of the dev server's output (at its warn level), for its log if the server dies. */
const TEMPORAL_LINES_KEPT = 40;

/** A Go runtime's last words: the reason comes first, then a dump of every goroutine that buries it. */
const GO_CRASH = /^(panic:|fatal error:)/;

/**
 * The last `count` lines of a process's output, and the first `count` from a Go crash's first line
 * (its reason and the goroutine that failed); every line also appended to `file` when given.
 */
function lastWords(count: number, file: string | undefined) {
  const lines: string[] = [];
  let crash: string[] | undefined;
  return {
    add(chunk: string) {
      if (file) appendFileSync(file, chunk);
      for (const line of chunk.split('\n').filter((l) => l.trim() !== '')) {
        if (!crash && GO_CRASH.test(line)) crash = [];
        if (crash && crash.length < count) crash.push(line);
        lines.push(line);
      }
      lines.splice(0, Math.max(0, lines.length - count));
    },
    text: () => [...(crash ? [...crash, '...'] : []), ...lines].join('\n'),
  };
}

/**
 * The stack's Node processes: started with their stdout in one file (BENCH_SERVICE_LOG=<file>
 * keeps it; by default it goes with the stack, once its lines have been counted by level and
 * its errors shown), and stopped, some or all.
 */
function childProcesses(tempDir: string, log: (line: string) => void) {
  let children: ChildProcess[] = [];
  const serviceLog = resolve(process.env.BENCH_SERVICE_LOG || join(tempDir, 'services.log'));
  // Appended to, so that the processes sharing it (the API's two, the worker) never write over
  // each other's lines.
  writeFileSync(serviceLog, '');
  const serviceLogFd = openSync(serviceLog, 'a');
  // BENCH_PROFILE_DIR=<dir> writes a V8 CPU profile of each child process there at its exit.
  const profile = process.env.BENCH_PROFILE_DIR
    ? ['--cpu-prof', '--cpu-prof-dir', resolve(process.env.BENCH_PROFILE_DIR)]
    : [];
  // BENCH_NODE_FLAGS=<flags> passes more Node flags to each child (e.g. --trace-gc, which
  // NODE_OPTIONS refuses): its lines go to the service log.
  const flags = (process.env.BENCH_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);
  return {
    spawn(entry: string, env: NodeJS.ProcessEnv): ChildProcess {
      const child = spawn(process.execPath, [...profile, ...flags, '--import', 'tsx', join(ROOT, entry)], {
        cwd: ROOT,
        env,
        stdio: ['ignore', serviceLogFd, 'inherit', 'ipc'],
      });
      children.push(child);
      return child;
    },
    running: () => [...children],
    async stop(some: ChildProcess[]): Promise<void> {
      // A paused child (the worker during the ingestion phase) would not act on SIGTERM.
      for (const c of some) if (c.exitCode === null && c.signalCode === null) c.kill('SIGCONT');
      // 20 s: the API exits by itself within 17 s (api/shutdown.ts) and writes its profile.
      await Promise.all(some.map((c) => stopChild(c, 20_000)));
      children = children.filter((c) => !some.includes(c));
    },
    async closeLog(): Promise<void> {
      closeSync(serviceLogFd);
      await summarizeServiceLog(serviceLog, log);
    },
  };
}

/** The environment of the API, the worker and the bench's other Node processes. */
function childEnv(s: {
  databaseUrl: string;
  temporalAddress: string;
  operatorToken: string;
  secretKeys: string;
  port: number;
  logLevel: string;
}): NodeJS.ProcessEnv {
  // Where and how traces are exported is the tracing phase's to say (bench/tracing.ts): without
  // it the services trace nothing, whatever the bench's own environment holds. The sampler and
  // the batch processor's OTEL_BSP_* settings pass, to measure tracing with them.
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_EXPORTER_OTLP_')),
  );
  return {
    ...inherited,
    DATABASE_URL: s.databaseUrl,
    TEMPORAL_ADDRESS: s.temporalAddress,
    OPERATOR_TOKEN: s.operatorToken,
    WEBHOOK_SECRET_KEYS: s.secretKeys,
    LOG_LEVEL: s.logLevel,
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

/**
 * How much the child processes logged, by level, and their error and fatal lines (the first
 * 20): the bench's report does not carry their stdout.
 */
async function summarizeServiceLog(file: string, log: (line: string) => void): Promise<void> {
  const byLevel = new Map<string, number>();
  const errors: string[] = [];
  let lines = 0;
  const reader = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const line of reader) {
    lines++;
    const level = /"level":(\d+)/.exec(line)?.[1] ?? 'other';
    byLevel.set(level, (byLevel.get(level) ?? 0) + 1);
    if (Number(level) >= 50 && errors.length < 20) errors.push(line.length > 600 ? `${line.slice(0, 600)}…` : line);
  }
  const names: Record<string, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
  const counts = [...byLevel].map(([level, n]) => `${names[level] ?? level} ${n}`).join(', ');
  const mib = (statSync(file).size / 2 ** 20).toFixed(1);
  log(
    `service logs: ${lines} lines, ${mib} MiB (${counts || 'none'})${process.env.BENCH_SERVICE_LOG ? ` in ${file}` : ''}`,
  );
  for (const line of errors) log(`service log: ${line}`);
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
