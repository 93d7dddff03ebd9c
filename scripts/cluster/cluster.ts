// The production-like topology on one machine (docs/operating/runbook.md, "Production-like cluster"): embedded
// PostgreSQL holding the service's `rewards` database and Temporal's own two databases, a real
// Temporal server (scripts/cluster/temporal-server.ts), then two API processes and two worker
// processes, each its own Node process as separate hosts would be. Used by `npm run cluster`
// (scripts/cluster/main.ts) and by the test that kills processes mid-run
// (test/cluster/exactly-once.cluster.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { devStackEnv, loadConfig } from '../../core/config';
import { migrate } from '../../prisma/migrate';
import { shutdownBoundMs } from '../../api/shutdown';
import { workerShutdownBoundMs } from '../../worker/shutdown';
import { ensureDevWebhookSecretKeys } from '../lib/webhook-secret-key';
import { freePort } from '../../test/helpers/ports';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../lib/embedded-postgres';
import { stopChild } from '../lib/temporal-dev-server';
import { freeSmallPort } from './ports';
import { buildService, processCommand, runFrom, type ServiceProcess } from './processes';
import {
  ensureTemporalBinaries,
  prepareTemporalDatabases,
  startTemporalServer,
  TEMPORAL_SERVER_VERSION,
  type TemporalBinaries,
  type TemporalPorts,
  type TemporalServerHandle,
} from './temporal-server';

const ROOT = resolve(__dirname, '..', '..');
const NAMESPACE = 'default';

export interface ServiceChild {
  kind: ServiceProcess;
  name: string;
  child: ChildProcess;
  /** The API's base URL; the worker's metrics URL. */
  url: string;
}

export interface Cluster {
  databaseUrl: string;
  temporalAddress: string;
  temporalMetricsUrl: string;
  temporalConfigFile: string;
  postgresPort: number;
  namespace: string;
  operatorToken: string;
  apis: ServiceChild[];
  workers: ServiceChild[];
  /** What the service processes run: the TypeScript sources (tsx) or the compiled build. */
  runFrom: 'source' | 'dist';
  stop(): Promise<void>;
}

export interface ClusterOptions {
  dataDir: string;
  /** Keep PostgreSQL's data between runs (npm run cluster) or throw it away (the test). */
  persistent: boolean;
  operatorToken?: string;
  /** 0 or absent: a free port. */
  ports?: { postgres?: number; temporal?: number; apis?: number[] };
  apiCount?: number;
  workerCount?: number;
  /** Added to every service process's environment (after the cluster's own settings). */
  serviceEnv?: Record<string, string>;
  /** Where the processes' output goes: this terminal, or one file per process under dataDir/logs. */
  output: 'inherit' | 'files';
  log: (line: string) => void;
}

/** What a cluster start-up has begun so far, so that stop() can end it in order. */
interface Launch {
  options: ClusterOptions;
  dataDir: string;
  logDir: string;
  /** Run in this order by stop(): the last thing started first. */
  stops: Array<() => Promise<void>>;
  services: ServiceChild[];
  children: ChildProcess[];
}

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const dataDir = resolve(options.dataDir);
  const logDir = join(dataDir, 'logs');
  mkdirSync(logDir, { recursive: true });
  const launch: Launch = { options, dataDir, logDir, stops: [], services: [], children: [] };
  // Every process runs in a process group of its own (`detached`), so a Ctrl-C at the terminal
  // reaches only the caller, which stops them in order. Should this process exit without stop()
  // (an uncaught error, process.exit), they must not live on holding ports; embedded PostgreSQL
  // is stopped by its own exit hook.
  const killAll = () =>
    launch.children.forEach((c) => c.exitCode === null && c.signalCode === null && c.kill('SIGKILL'));
  process.once('exit', killAll);
  const stop = stopInOrder(launch, killAll);
  try {
    const binaries = await ensureTemporalBinaries(options.log);
    buildService(options.log);
    const { pg, postgresPort, databaseUrl, secretKeys } = await startDatabase(launch);
    const temporal = await startTemporal(launch, binaries, pg, postgresPort);
    const operatorToken = options.operatorToken ?? `op_cluster_${randomBytes(24).toString('base64url')}`;
    const baseEnv: NodeJS.ProcessEnv = {
      // Local webhook receivers, as under npm start (core/config.ts refuses it in production).
      ...devStackEnv(process.env),
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: NAMESPACE,
      OPERATOR_TOKEN: operatorToken,
      WEBHOOK_SECRET_KEYS: secretKeys.value,
      HOST: '127.0.0.1',
      // One process per API: each stands for one host, and SIGKILL takes all of it at once.
      API_PROCESSES: '1',
      LOG_LEVEL: process.env.LOG_LEVEL || 'warn',
      ...options.serviceEnv,
    };
    const { workers, apis } = await startServices(launch, baseEnv);
    return {
      databaseUrl,
      temporalAddress: temporal.address,
      temporalMetricsUrl: temporal.metricsUrl,
      temporalConfigFile: temporal.configFile,
      postgresPort,
      namespace: NAMESPACE,
      operatorToken,
      apis,
      workers,
      runFrom: runFrom(),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * The APIs first (they drain requests and hand-overs), then the workers (they finish their
 * activities), then Temporal, then PostgreSQL: nothing loses a service it still uses.
 */
function stopInOrder(launch: Launch, killAll: () => void): () => Promise<void> {
  const config = loadConfig(devStackEnv(process.env));
  // Each waited for a little longer than it takes to stop by itself, as npm start does.
  const boundMs = {
    api: shutdownBoundMs({ drainDelayMs: config.shutdownDrainDelayMs, graceMs: config.apiShutdownGraceMs }) + 5_000,
    worker: workerShutdownBoundMs(config.workerShutdownGraceMs) + 5_000,
  };
  return async () => {
    for (const kind of ['api', 'worker'] as const) {
      const services = launch.services.filter((s) => s.kind === kind);
      await Promise.all(services.map((s) => stopChild(s.child, boundMs[kind])));
    }
    for (const s of launch.stops) await s().catch((err) => launch.options.log(`stop failed: ${String(err)}`));
    process.off('exit', killAll);
  };
}

/** Embedded PostgreSQL with the service's `rewards` database, migrated. */
async function startDatabase(launch: Launch) {
  const { options, dataDir } = launch;
  const postgresPort = options.ports?.postgres || (await freePort());
  options.log(`starting embedded PostgreSQL on ${postgresPort}`);
  const pg = await startEmbeddedPostgres({
    dataDir: join(dataDir, 'postgres'),
    port: postgresPort,
    persistent: options.persistent,
    detached: true,
    notice: options.log,
  });
  launch.stops.unshift(() => pg.stop());
  await pg.createDatabase('rewards');
  const databaseUrl = pg.databaseUrl('rewards');
  // The cluster's own key for webhook signing secrets at rest, kept beside its data.
  const secretKeys = ensureDevWebhookSecretKeys(dataDir);
  await migrate(databaseUrl, { webhookSecretKeys: secretKeys.keys });
  return { pg, postgresPort, databaseUrl, secretKeys };
}

/** The Temporal server on its own databases in the cluster's PostgreSQL. */
async function startTemporal(
  launch: Launch,
  binaries: TemporalBinaries,
  pg: EmbeddedPostgresHandle,
  postgresPort: number,
): Promise<TemporalServerHandle> {
  const { options, dataDir, logDir } = launch;
  // Temporal's role and databases; its password is the cluster's own, never the superuser's.
  const temporalDb = {
    host: '127.0.0.1',
    port: postgresPort,
    user: 'temporal',
    password: `tp_${randomBytes(12).toString('hex')}`,
  };
  await prepareTemporalDatabases(binaries.sqlTool, pg.databaseUrl('postgres'), temporalDb);
  const ports = await temporalPorts(options.ports?.temporal);
  options.log(
    `starting Temporal server ${TEMPORAL_SERVER_VERSION} (PostgreSQL persistence and visibility, 4 history shards) on ${ports.frontend}`,
  );
  const serverLog = createWriteStream(join(logDir, 'temporal-server.log'), { flags: 'a' });
  const temporal = await startTemporalServer({
    onSpawn: (child) => launch.children.push(child),
    server: binaries.server,
    configDir: dataDir,
    db: temporalDb,
    ports,
    namespace: NAMESPACE,
    log: (line) => serverLog.write(line),
  });
  launch.stops.unshift(async () => {
    await temporal.stop();
    serverLog.end();
  });
  return temporal;
}

/** The workers, then the APIs; returns when every one says it is ready. */
async function startServices(launch: Launch, baseEnv: NodeJS.ProcessEnv) {
  const { options } = launch;
  const workers: ServiceChild[] = [];
  for (let i = 0; i < (options.workerCount ?? 2); i++) {
    // Each worker exports its metrics on ports of its own, as separate hosts would.
    const metricsPort = await freePort();
    const temporalMetricsPort = await freePort();
    const env = { WORKER_METRICS_PORT: String(metricsPort), TEMPORAL_METRICS_PORT: String(temporalMetricsPort) };
    workers.push(spawnService(launch, baseEnv, 'worker', i, env, `http://127.0.0.1:${metricsPort}/metrics`));
  }
  const apis: ServiceChild[] = [];
  for (let i = 0; i < (options.apiCount ?? 2); i++) {
    const port = options.ports?.apis?.[i] || (await freePort());
    apis.push(spawnService(launch, baseEnv, 'api', i, { PORT: String(port) }, `http://127.0.0.1:${port}`));
  }
  await Promise.all([...workers, ...apis].map((s) => childReady(s)));
  return { workers, apis };
}

/** One API or worker process, its output to the terminal or to its own file under the logs. */
function spawnService(
  launch: Launch,
  baseEnv: NodeJS.ProcessEnv,
  kind: ServiceProcess,
  index: number,
  env: Record<string, string>,
  url: string,
): ServiceChild {
  const name = `${kind}-${index + 1}`;
  const { command, args } = processCommand(kind);
  const output = launch.options.output === 'files' ? 'pipe' : 'inherit';
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...baseEnv, ...env },
    stdio: ['ignore', output, output, 'ipc'],
    detached: true,
  });
  if (launch.options.output === 'files') {
    const file = createWriteStream(join(launch.logDir, `${name}.log`), { flags: 'a' });
    child.stdout?.pipe(file);
    child.stderr?.pipe(file);
  }
  launch.children.push(child);
  const service = { kind, name, child, url };
  launch.services.push(service);
  return service;
}

// Below 32768, as the server's membership table requires (scripts/cluster/ports.ts).
async function temporalPorts(frontend?: number): Promise<TemporalPorts> {
  return {
    frontend: frontend || (await freeSmallPort()),
    frontendHttp: await freeSmallPort(),
    frontendMembership: await freeSmallPort(),
    history: await freeSmallPort(),
    historyMembership: await freeSmallPort(),
    matching: await freeSmallPort(),
    matchingMembership: await freeSmallPort(),
    worker: await freeSmallPort(),
    workerMembership: await freeSmallPort(),
    metrics: await freeSmallPort(),
  };
}

/**
 * The API says it listens and the worker that it polls over the IPC channel (both send
 * `{ ready: true }`, as for npm run bench); bounded, since a worker waits for Temporal.
 */
function childReady(service: ServiceChild, timeoutMs = 120_000): Promise<void> {
  return new Promise((resolveReady, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${service.name} not ready within ${timeoutMs / 1000} s`)),
      timeoutMs,
    );
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`${service.name} exited with ${code} before it was ready`));
    };
    service.child.once('exit', onExit);
    service.child.on('message', (m: unknown) => {
      if ((m as { ready?: boolean })?.ready) {
        clearTimeout(timer);
        service.child.off('exit', onExit);
        resolveReady();
      }
    });
  });
}
