// `npm start`: the whole service on one machine. Uses DATABASE_URL and TEMPORAL_ADDRESS
// when set; otherwise starts embedded PostgreSQL (.data/postgres) and the Temporal dev
// server (.data/temporal.db, Web UI on TEMPORAL_UI_PORT). Then migrates, prepares the
// first-run sandbox issuer, loads the sandbox catalogue (into an external DATABASE_URL only with
// SEED_SANDBOX=true), and runs the API and the worker as child processes.
// WEBHOOK_SECRET_KEYS, when unset, is generated once into .data/webhook-secret-key.
//
// Each of them is kept running (scripts/lib/keep-running.ts): a process that exits without being
// told to is logged and started again, with backoff, on the same data and ports.
//
// Ctrl-C (or SIGTERM, SIGHUP) stops them one after the other, each within a bound
// (docs/operating/runbook.md, "Shutdown and probes"): the API (it drains its requests and hand-overs), then the worker (it
// finishes its activities), then Temporal, then PostgreSQL, so nothing loses a service it still
// uses. Every process this one starts runs in a process group of its own (`detached`): a
// Ctrl-C at the terminal reaches only this supervisor, which alone decides the order. Should it
// exit any other way, each is still stopped as it exits.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { devStackEnv, loadConfig, type Config } from '../core/config';
import { createLogger, type Logger } from '../core/logger';
import { migrate } from '../prisma/migrate';
import { createDb } from '../prisma/client';
import { startEmbeddedPostgres } from './lib/embedded-postgres';
import { startTemporalDevServer, stopChild, type TemporalDevServerHandle } from './lib/temporal-dev-server';
import { keepRunning, type Running } from './lib/keep-running';
import { ensureOperatorToken, ensureSandboxIssuer, sandboxSeeding } from './lib/first-run';
import { ensureDevWebhookSecretKeys } from './lib/webhook-secret-key';
import { importCatalogueFile, SANDBOX_CATALOGUE_FILE } from '../api/catalogue/import';
import { shutdownBoundMs } from '../api/shutdown';
import { workerShutdownBoundMs } from '../worker/shutdown';

const ROOT = resolve(__dirname, '..');

let stack: Supervisor | undefined;

async function main(): Promise<void> {
  // Local webhook receivers work out of the box (docs/operating/security.md, "Webhook
  // destinations"); a bad combination stops here.
  const stackEnv = devStackEnv();
  const config = loadConfig(stackEnv);
  const logger = createLogger(config.logLevel, 'stack');
  // Decided before anything starts: a refusal is one line and exit code 1.
  const seeding = sandboxSeeding(config);
  if ('refusal' in seeding) {
    console.error(seeding.refusal);
    process.exit(1);
  }
  const dataDir = resolve(ROOT, config.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const supervisor = supervise(logger);
  stack = supervisor;

  const databaseUrl = config.databaseUrl || (await startPostgres(supervisor, config, dataDir, logger));
  const temporalAddress = config.temporalAddress || (await startTemporal(supervisor, config, dataDir, logger));

  // Before migrating: sealing the secrets of a database from before they were sealed needs it.
  const secretKeys = config.webhookSecretKeys
    ? { keys: config.webhookSecretKeys, value: stackEnv.WEBHOOK_SECRET_KEYS!, source: 'from WEBHOOK_SECRET_KEYS' }
    : ensureDevWebhookSecretKeys(dataDir);
  logger.info({ source: secretKeys.source, keyIds: secretKeys.keys.keyIds }, 'webhook secret keys');
  const migrations = await migrate(databaseUrl, {
    webhookSecretKeys: secretKeys.keys,
    lockTimeoutMs: config.migrationLockTimeoutMs,
  });
  logger.info({ applied: migrations.applied }, 'migrations up to date');
  for (const { migration, report } of migrations.reports) logger.warn({ migration }, report);
  const operatorToken = ensureOperatorToken(config.operatorToken, dataDir);
  if (seeding.seed) await loadSandbox(databaseUrl, logger);
  else logger.info('SEED_SANDBOX=false: no sandbox catalogue or issuer');
  if (supervisor.stopping) return;

  await startService(supervisor, config, {
    ...stackEnv,
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporalAddress,
    OPERATOR_TOKEN: operatorToken.value,
    WEBHOOK_SECRET_KEYS: secretKeys.value,
  });
  console.log(`\nAPI       http://localhost:${config.port}  (OpenAPI: /openapi.json, readiness: /readyz)`);
  if (!config.temporalAddress) console.log(`Temporal  http://localhost:${config.temporalUiPort}  (Web UI)`);
  console.log(`Operator  token ${operatorToken.source}${operatorToken.printable ? `: ${operatorToken.value}` : ''}\n`);
}

/** Embedded PostgreSQL under the data directory, kept running; returns the `rewards` database's URL. */
async function startPostgres(supervisor: Supervisor, config: Config, dataDir: string, logger: Logger): Promise<string> {
  logger.info({ port: config.embeddedPgPort }, 'starting embedded PostgreSQL');
  const pg = await startEmbeddedPostgres({
    dataDir: join(dataDir, 'postgres'),
    port: config.embeddedPgPort,
    persistent: true,
    detached: true,
    notice: (line) => logger.info(line),
  });
  const pgRun = (): Running => ({ exited: pg.exited, stop: () => pg.stop() });
  supervisor.kept('PostgreSQL', pgRun(), async () => (await pg.restart(), pgRun()));
  await pg.createDatabase('rewards');
  return pg.databaseUrl('rewards');
}

/** The Temporal dev server, kept running; returns its address. */
async function startTemporal(supervisor: Supervisor, config: Config, dataDir: string, logger: Logger): Promise<string> {
  logger.info({ port: config.temporalDevPort }, 'starting the Temporal dev server');
  // The same port and SQLite file on every start: a restart serves the same histories.
  const start = (): Promise<TemporalDevServerHandle> =>
    startTemporalDevServer({
      cli: config.temporalCli,
      port: config.temporalDevPort,
      uiPort: config.temporalUiPort,
      dbFile: join(dataDir, 'temporal.db'),
      detached: true,
    });
  const temporal = await start();
  supervisor.kept('Temporal dev server', temporal, start);
  logger.info({ ui: temporal.uiUrl }, 'Temporal Web UI');
  return temporal.address;
}

/** The sandbox catalogue and, on the first run, the sandbox issuer with its API token. */
async function loadSandbox(databaseUrl: string, logger: Logger): Promise<void> {
  const db = createDb(databaseUrl, 2);
  // Every start: the upsert by id is idempotent and brings the sandbox catalogue up to date.
  const catalogue = await importCatalogueFile(db, SANDBOX_CATALOGUE_FILE, 'sandbox-catalogue', new Date(), {
    onlyMissing: true,
  });
  logger.info(catalogue, 'sandbox catalogue loaded');
  await ensureSandboxIssuer(db, (issuer, token) => {
    console.log(`\nFirst run: created sandbox issuer ${issuer} with API token (shown once, keep it):\n\n  ${token}\n`);
  });
  await db.$disconnect();
}

/** The worker, then the API, each kept running. */
async function startService(supervisor: Supervisor, config: Config, env: NodeJS.ProcessEnv): Promise<void> {
  // Each waited for a little longer than it takes to stop by itself (api/shutdown.ts, worker/main.ts).
  const apiBoundMs =
    shutdownBoundMs({ drainDelayMs: config.shutdownDrainDelayMs, graceMs: config.apiShutdownGraceMs }) + 5_000;
  const workerBoundMs = workerShutdownBoundMs(config.workerShutdownGraceMs) + 5_000;
  const worker = async () => runChild('worker/main.ts', env, workerBoundMs);
  const api = async () => runChild('api/server.ts', env, apiBoundMs);
  supervisor.kept('worker', await worker(), worker);
  supervisor.kept('API', await api(), api);
}

interface Supervisor {
  readonly stopping: boolean;
  /** Kept running (restarted when it exits), and stopped in the reverse order of these calls. */
  kept(name: string, first: Running, start: () => Promise<Running>): void;
  stop(code: number, reason: string): void;
}

/** Service processes still running, each stopped as this process exits, as a last resort. */
const children = new Set<ChildProcess>();

/** The stack's processes, stopped in the reverse order they started, one at a time. */
function supervise(logger: Logger): Supervisor {
  const steps: Array<{ name: string; stop: () => Promise<void> }> = [];
  let stopping = false;
  const supervisor: Supervisor = {
    get stopping() {
      return stopping;
    },
    kept(name, first, start) {
      const kept = keepRunning(name, first, start, logger);
      steps.push({ name, stop: () => kept.stop() });
    },
    stop(code, reason) {
      if (stopping) return;
      stopping = true;
      logger.info({ reason, order: steps.map((s) => s.name).reverse() }, 'stopping');
      void (async () => {
        // What finishes starting after this is stopped by its exit hook only.
        for (const step of [...steps].reverse()) {
          await step.stop().catch((err) => logger.warn({ err, process: step.name }, 'stop failed'));
          logger.info({ process: step.name }, 'stopped');
        }
        process.exit(code);
      })();
    },
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => supervisor.stop(0, signal));
  // Exiting any other way (a start-up failure, a crash): the service processes stop on their own.
  process.on('exit', () => children.forEach((c) => c.kill('SIGTERM')));
  return supervisor;
}

/** Starts a service process; stopping it waits `boundMs` for it to stop by itself (SIGTERM), then kills it. */
function runChild(entry: string, env: NodeJS.ProcessEnv, boundMs: number): Running {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, entry)], {
    cwd: ROOT,
    env,
    stdio: 'inherit',
    detached: true,
  });
  children.add(child);
  const exited = new Promise<string>((done) => {
    child.once('exit', (code, signal) => {
      children.delete(child);
      done(signal ? `signal ${signal}` : `code ${code}`);
    });
    // Could not be started at all: no 'exit' follows.
    child.once('error', (err) => (children.delete(child), done(`failed to start: ${err.message}`)));
  });
  return { exited, stop: () => stopChild(child, boundMs) };
}

main().catch((err) => {
  // A failure caused by a stop under way (PostgreSQL gone during migrations) is no news.
  if (stack?.stopping) return;
  console.error(err instanceof Error ? err.stack : err);
  if (stack) stack.stop(1, 'start-up failed');
  else process.exit(1);
});
