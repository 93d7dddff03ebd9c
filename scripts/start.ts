// `npm start`: the whole service on one machine. Uses DATABASE_URL and TEMPORAL_ADDRESS
// when set; otherwise starts embedded PostgreSQL (.data/postgres) and the Temporal dev
// server (.data/temporal.db, Web UI on TEMPORAL_UI_PORT). Then migrates, prepares the
// first-run sandbox issuer, loads the sandbox catalogue (into an external DATABASE_URL only with
// SEED_SANDBOX=true), and runs the API and the worker as child processes.
// Ctrl-C stops the children first, then Temporal, then PostgreSQL.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { devStackEnv, loadConfig } from '../core/config';
import { createLogger } from '../core/logger';
import { migrate } from '../prisma/migrate';
import { createDb } from '../prisma/client';
import { startEmbeddedPostgres } from './lib/embedded-postgres';
import { startTemporalDevServer, stopChild } from './lib/temporal-dev-server';
import { ensureOperatorToken, ensureSandboxIssuer, sandboxSeeding } from './lib/first-run';
import { importCatalogueFile, SANDBOX_CATALOGUE_FILE } from '../api/catalogue/import';

const ROOT = resolve(__dirname, '..');

async function main(): Promise<void> {
  // Local webhook receivers work out of the box (README, Security); a bad combination stops here.
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
  const stops: Array<() => Promise<void>> = [];

  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    logger.info({ port: config.embeddedPgPort }, 'starting embedded PostgreSQL');
    const pg = await startEmbeddedPostgres({ dataDir: join(dataDir, 'postgres'), port: config.embeddedPgPort, persistent: true });
    stops.unshift(() => pg.stop());
    await pg.createDatabase('rewards');
    databaseUrl = pg.databaseUrl('rewards');
  }
  let temporalAddress = config.temporalAddress;
  if (!temporalAddress) {
    logger.info({ port: config.temporalDevPort }, 'starting the Temporal dev server');
    const temporal = await startTemporalDevServer({
      cli: config.temporalCli,
      port: config.temporalDevPort,
      uiPort: config.temporalUiPort,
      dbFile: join(dataDir, 'temporal.db'),
    });
    stops.unshift(() => temporal.stop());
    temporalAddress = temporal.address;
    logger.info({ ui: temporal.uiUrl }, 'Temporal Web UI');
  }

  const migrations = await migrate(databaseUrl);
  logger.info({ applied: migrations.applied }, 'migrations up to date');
  const operatorToken = ensureOperatorToken(config.operatorToken, dataDir);
  if (seeding.seed) {
    const db = createDb(databaseUrl, 2);
    // Every start: the upsert by id is idempotent and brings the sandbox catalogue up to date.
    const catalogue = await importCatalogueFile(db, SANDBOX_CATALOGUE_FILE, 'sandbox-catalogue', new Date(), { onlyMissing: true });
    logger.info(catalogue, 'sandbox catalogue loaded');
    await ensureSandboxIssuer(db, (issuer, token) => {
      console.log(`\nFirst run: created sandbox issuer ${issuer} with API token (shown once, keep it):\n\n  ${token}\n`);
    });
    await db.$disconnect();
  } else {
    logger.info('SEED_SANDBOX=false: no sandbox catalogue or issuer');
  }

  const env = { ...stackEnv, DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: temporalAddress, OPERATOR_TOKEN: operatorToken.value };
  const children = [runChild('api/server.ts', env), runChild('worker/main.ts', env)];
  console.log(`\nAPI       http://localhost:${config.port}  (OpenAPI: /openapi.json, readiness: /readyz)`);
  if (!config.temporalAddress) console.log(`Temporal  http://localhost:${config.temporalUiPort}  (Web UI)`);
  console.log(`Operator  token ${operatorToken.source}${operatorToken.printable ? `: ${operatorToken.value}` : ''}\n`);

  let stopping = false;
  const shutdown = async (code: number) => {
    if (stopping) return;
    stopping = true;
    logger.info('stopping');
    await Promise.all(children.map((c) => stopChild(c, 20_000)));
    for (const stop of stops) await stop().catch((err) => logger.warn({ err }, 'stop failed'));
    process.exit(code);
  };
  for (const child of children) {
    child.once('exit', (code) => {
      if (!stopping) {
        logger.error({ code }, 'a service process exited; stopping the stack');
        void shutdown(1);
      }
    });
  }
  process.once('SIGINT', () => void shutdown(0));
  process.once('SIGTERM', () => void shutdown(0));
}

function runChild(entry: string, env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', join(ROOT, entry)], { cwd: ROOT, env, stdio: 'inherit' });
}

main().catch((err) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});
