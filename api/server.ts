// The API process: reads configuration, connects, listens, and shuts down gracefully
// (api/shutdown.ts: readiness 503 first, then the port, requests in flight, pools). With
// API_PROCESSES > 1 this process forks that many copies of itself (node:cluster) which share
// the port, each with its own pool, token cache and hand-over queue, and one set of rate-limit
// counters kept by the primary (api/middleware/rate-limit.ts); it passes SIGINT and SIGTERM on
// to them and exits when they have.
import cluster from 'node:cluster';
import { databaseTimeouts, loadConfig, requireConnections } from '../core/config';
import { workflowSettings, type WorkflowEngine } from '../core/workflow-engine';
import { createLogger } from '../core/logger';
import { createDb } from '../prisma/client';
import { Client } from '@temporalio/client';
import { connectTemporal } from '../core/temporal-connection';
import { createApiHandover } from './ingestion/handover-queue';
import { createApp } from './app';
import { clientInterceptors, startTracing } from '../core/tracing';
import { answerClientErrors } from './client-errors';
import { listenForAuthChanges, TokenCache } from './middleware/token-cache';
import { createRateLimiter, startRateLimitPrimary } from './middleware/rate-limit';
import { collectProcessMetrics } from '../core/metrics';
import { systemClock } from './deps';
import { createWebhookDestinations } from '../core/webhooks/destination-guard';
import { assertStoredSecretsOpen } from '../core/domain/webhook-secret-keys';
import { createDraining } from './draining';
import { temporalProbe } from './health/readiness';
import { stopApi } from './shutdown';
import { copyNodeFlags } from './copy-node-flags';

async function main(): Promise<void> {
  const config = requireConnections(loadConfig());
  const logger = createLogger(config.logLevel, 'api');
  // Before anything runs SQL: with OTEL_* set, PostgreSQL's client is patched here (core/tracing.ts).
  const tracing = startTracing('rewards-api');
  collectProcessMetrics();
  // Root is the way in until named admins exist; a deployment that switched it off needs no token.
  if (config.operatorRootEnabled && !config.operatorToken)
    throw new Error('OPERATOR_TOKEN is required for the API process (or OPERATOR_ROOT=disabled)');
  const timeouts = databaseTimeouts(config, 'api');
  const db = createDb(config.databaseUrl, config.databasePoolSize, timeouts);
  await assertStoredSecretsOpen(db, config.webhookSecretKeys);
  const temporal = await connectTemporal(config);
  const client = new Client({
    connection: temporal,
    namespace: config.temporalNamespace,
    ...clientInterceptors(tracing),
  });
  const engine: WorkflowEngine = { client, taskQueue: config.temporalTaskQueue, settings: workflowSettings(config) };
  const handover = createApiHandover({ temporal: engine, db }, logger, config.handoverMaxInFlight);
  const tokenCache = new TokenCache();
  const draining = createDraining();
  const authListener = listenForAuthChanges(config.databaseUrl, tokenCache, logger, timeouts);
  const app = createApp({
    tokenCache,
    rateLimiter: createRateLimiter(config.rateLimits, { shared: cluster.isWorker }),
    handover,
    temporal: engine,
    db,
    logger,
    clock: systemClock,
    config: {
      operatorToken: config.operatorRootEnabled ? config.operatorToken : undefined,
      metricsToken: config.metricsToken,
      ingestionBacklogLimit: config.ingestionBacklogLimit,
    },
    webhookDestinations: createWebhookDestinations({ allowPrivate: config.webhookAllowPrivateDestinations }),
    webhookSecretKeys: config.webhookSecretKeys,
    temporalHealth: temporalProbe(temporal),
    draining,
  });
  const server = answerClientErrors(
    app.listen(config.port, config.host, () => {
      logger.info({ port: config.port, host: config.host }, 'API listening');
      process.send?.({ ready: true });
    }),
  );
  // Readiness first, then the port, requests, hand-over and pools, each bounded (api/shutdown.ts).
  const shutdown = (signal: string) =>
    stopApi(
      {
        server,
        draining,
        handover,
        logger,
        drainDelayMs: config.shutdownDrainDelayMs,
        graceMs: config.apiShutdownGraceMs,
        close: () => Promise.allSettled([authListener.close(), db.$disconnect(), temporal.close(), tracing.shutdown()]),
      },
      signal,
    );
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
  // A copy whose primary died (killed, not stopped) stops too instead of serving on alone.
  if (cluster.isWorker) process.once('disconnect', () => shutdown('primary gone'));
}

function primary(processes: number): void {
  const config = loadConfig();
  // Before the first fork: the copies' rate-limit counters live here, shared over IPC.
  startRateLimitPrimary(config.rateLimits);
  cluster.setupPrimary({ execArgv: copyNodeFlags(process.execArgv, config.apiSemiSpaceMb) });
  const workers = Array.from({ length: processes }, () => cluster.fork());
  let ready = 0;
  for (const w of workers) {
    w.on('message', (m: { ready?: boolean }) => {
      // A parent that spawned us with an IPC channel (npm run bench) learns we listen.
      if (m?.ready && ++ready === processes) process.send?.({ ready: true });
    });
  }
  let stopping = false;
  let crashed = false;
  const stop = (signal: NodeJS.Signals) => {
    stopping = true;
    for (const w of workers) if (!w.isDead()) w.process.kill(signal);
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  cluster.on('exit', (worker, code) => {
    // One copy dying takes the others down: the supervisor (npm start, systemd, Kubernetes)
    // restarts the whole API, rather than this process hiding a crash loop.
    if (!stopping) {
      crashed = true;
      console.error(`API process ${worker.process.pid} exited with ${code}; stopping the others`);
      stop('SIGTERM');
    }
    if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(crashed ? 1 : 0);
  });
}

/** A bad configuration is reported by main(), with every problem listed. */
function configuredProcesses(): number {
  try {
    return loadConfig().apiProcesses;
  } catch {
    return 1;
  }
}

const processes = configuredProcesses();
const start = processes > 1 && cluster.isPrimary ? async () => primary(processes) : main;

start().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
