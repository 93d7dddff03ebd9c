// The worker process. SIGINT/SIGTERM stop it within a bound (worker/shutdown.ts): polling
// stops, running activities get WORKER_SHUTDOWN_GRACE to finish (then they are cancelled, and
// abandoned 5 s later) while the webhook relay finishes its first attempts in flight; then the
// connections close.
import { ConfigError, databaseTimeouts, loadConfig, requireConnections } from '../core/config';
import { workflowSettings, type WorkflowEngine } from '../core/workflow-engine';
import { createWebhookDestinations } from '../core/webhooks/destination-guard';
import { createLogger, type Logger } from '../core/logger';
import { createDb } from '../prisma/client';
import { Client } from '@temporalio/client';
import { connectTemporal, connectWorker } from '../core/temporal-connection';
import { ensureSchedules } from './schedules';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { collectProcessMetrics } from '../core/metrics';
import { startWorkerMetricsServer } from './metrics-server';
import { createWorker } from './worker';
import { clientInterceptors, startTracing } from '../core/tracing';
import { startWebhookRelay } from './webhook-relay';
import { startHandoverWatch } from './handover-watch';
import { createHandoverRelease } from './handover-release';
import { startLedgerWatch } from './ledger-watch';
import { startUnstartedRunsWatch } from './unstarted-runs-watch';
import { startBudgetWatch } from './budget-watch';
import { startHoldSweep } from './hold-sweep';
import { startEnrolmentRunWatch } from './enrolment-run-watch';
import type { Periodic } from './periodic';
import { assertStoredSecretsOpen } from '../core/domain/webhook-secret-keys';
import { RELAY_STOP_MS, workerShutdownBoundMs } from './shutdown';

// LOG_LEVEL (pino's names) for the SDK's own log lines too.
const SDK_LOG_LEVELS: Record<string, 'TRACE' | 'DEBUG' | 'INFO' | 'WARN' | 'ERROR'> = {
  trace: 'TRACE',
  debug: 'DEBUG',
  info: 'INFO',
  warn: 'WARN',
  error: 'ERROR',
  fatal: 'ERROR',
  silent: 'ERROR',
};

async function main(): Promise<void> {
  const config = requireConnections(loadConfig());
  const logger = createLogger(config.logLevel, 'worker');
  // Before anything runs SQL: with OTEL_* set, PostgreSQL's client is patched here (core/tracing.ts).
  const tracing = startTracing('rewards-worker');
  if (tracing.enabled) logger.info('tracing: exporting spans over OTLP');
  const temporalMetrics = installRuntime(config);
  collectProcessMetrics();
  const metricsServer = metricsServerOf(config, temporalMetrics);
  const database = { databaseUrl: config.databaseUrl, databaseTimeouts: databaseTimeouts(config, 'worker') };
  const db = createDb(database.databaseUrl, config.databasePoolSize, database.databaseTimeouts);
  await assertStoredSecretsOpen(db, config.webhookSecretKeys);
  const connection = await connectWorker(config);
  const clientConnection = await connectTemporal(config);
  const client = new Client({
    connection: clientConnection,
    namespace: config.temporalNamespace,
    ...clientInterceptors(tracing),
  });
  await ensureSchedules(client, config.temporalTaskQueue);
  const clock = { now: () => new Date() };
  const temporal: WorkflowEngine = { client, taskQueue: config.temporalTaskQueue, settings: workflowSettings(config) };
  const webhookDestinations = createWebhookDestinations({ allowPrivate: config.webhookAllowPrivateDestinations });
  if (webhookDestinations.allowPrivate)
    logger.warn('WEBHOOK_ALLOW_PRIVATE_DESTINATIONS is on: webhooks may go to loopback and private addresses');
  const webhookSecretKeys = config.webhookSecretKeys;
  const webhooks = {
    webhookDestinations,
    webhookSecretKeys,
    webhookEndpointDisableAfterMs: config.webhookEndpointDisableAfterMs,
  };
  const relay = startWebhookRelay({ db, logger, clock, temporal, ...database, ...webhooks });
  // Places given back are taken again at once, not at the watch's next turn.
  const handoverRelease = createHandoverRelease({ db, logger, onReleased: () => watches.handover.wake() });
  const worker = await createWorker({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.temporalTaskQueue,
    deps: { db, logger, clock, temporal, relay, handoverMaxInFlight: config.handoverMaxInFlight, ...webhooks },
    maxConcurrentActivities: config.databasePoolSize,
    shutdownGraceMs: config.workerShutdownGraceMs,
    tracing,
    handoverRelease,
  });
  const watches = startWatches({ db, clock, temporal, logger, handoverMaxInFlight: config.handoverMaxInFlight });
  // The SDK shuts the worker down on these signals by itself; the relay and the watches stop
  // beside it.
  let relayStopped: Promise<void> | undefined;
  const stopRelay = () =>
    (relayStopped ??= Promise.all([stopWithin(relay, RELAY_STOP_MS, logger), watches.stop()]).then(() => undefined));
  const onSignal = () => {
    void stopRelay();
    setTimeout(
      () => {
        logger.error('worker shutdown took too long; exiting');
        process.exit(1);
      },
      workerShutdownBoundMs(config.workerShutdownGraceMs) + 500,
    ).unref();
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  logger.info({ taskQueue: config.temporalTaskQueue, namespace: config.temporalNamespace }, 'worker polling');
  const running = worker.run();
  // A parent that spawned us with an IPC channel (npm run bench) learns we are polling.
  process.send?.({ ready: true });
  await running;
  await stopRelay();
  // The last runs' evictions came with the shutdown: their places are given back before the pool closes.
  await handoverRelease.flush();
  await db.$disconnect();
  await connection.close();
  await clientConnection.close();
  metricsServer?.close();
  await tracing.shutdown();
  logger.info('worker stopped');
}

/**
 * Temporal's runtime, with the SDK's log level and its worker metrics on an internal loopback
 * port: /metrics on WORKER_METRICS_PORT serves them after ours (worker/metrics-server.ts). Port
 * 0: off. Returns that address.
 */
/**
 * The watches beside the SDK's worker: the hand-over queue, the ledger's trial balance, the offers'
 * budgets, the rows whose workflow was never started, the sweep of matured cashback holds, the
 * enrolment runs of targeted offers whose start came.
 */
function startWatches(deps: Parameters<typeof startHandoverWatch>[0]): { handover: Periodic; stop(): Promise<void> } {
  const handover = startHandoverWatch(deps);
  const watches = [
    handover,
    startLedgerWatch(deps),
    startBudgetWatch(deps),
    startUnstartedRunsWatch(deps),
    startHoldSweep(deps),
    startEnrolmentRunWatch(deps),
  ];
  return { handover, stop: () => Promise.all(watches.map((w) => w.stop())).then(() => undefined) };
}

/** /metrics on WORKER_METRICS_PORT, ours then the SDK's from `temporalMetrics`; none on port 0. */
function metricsServerOf(config: ReturnType<typeof loadConfig>, temporalMetrics: string | undefined) {
  if (!config.workerMetricsPort) return undefined;
  return startWorkerMetricsServer(
    config.workerMetricsPort,
    temporalMetrics ? `http://${temporalMetrics}/metrics` : undefined,
  );
}

function installRuntime(config: ReturnType<typeof loadConfig>): string | undefined {
  const temporalMetrics = config.temporalMetricsPort ? `127.0.0.1:${config.temporalMetricsPort}` : undefined;
  Runtime.install({
    logger: new DefaultLogger(SDK_LOG_LEVELS[config.logLevel] ?? 'INFO'),
    ...(temporalMetrics ? { telemetryOptions: { metrics: { prometheus: { bindAddress: temporalMetrics } } } } : {}),
  });
  return temporalMetrics;
}

async function stopWithin(relay: { stop(): Promise<void> }, ms: number, logger: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)));
  if ((await Promise.race([relay.stop(), late])) === 'late')
    logger.warn({ boundMs: ms }, 'webhook relay still sending; leaving its rows to their claims');
  clearTimeout(timer);
}

main().catch((err) => {
  // A refused configuration names its problems; a stack trace would only bury them.
  console.error(err instanceof ConfigError ? err.message : err instanceof Error ? err.stack : err);
  process.exit(1);
});
