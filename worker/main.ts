// The worker process. SIGINT/SIGTERM let running activities finish (the SDK's shutdown
// grace) before the process exits.
import { loadConfig, requireConnections } from '../core/config';
import { createLogger } from '../core/logger';
import { createDb } from '../prisma/client';
import { Client } from '@temporalio/client';
import { connectTemporal, connectWorker } from './connection';
import { ensureSchedules } from './schedules';
import { Runtime } from '@temporalio/worker';
import { collectProcessMetrics } from '../core/metrics';
import { startWorkerMetricsServer } from './metrics-server';
import { createWorker } from './worker';

// Temporal's runtime exports its worker metrics here; /metrics on WORKER_METRICS_PORT
// serves them after ours (worker/metrics-server.ts).
const TEMPORAL_METRICS_ADDRESS = '127.0.0.1:9465';

async function main(): Promise<void> {
  const config = requireConnections(loadConfig());
  const logger = createLogger(config.logLevel, 'worker');
  Runtime.install({ telemetryOptions: { metrics: { prometheus: { bindAddress: TEMPORAL_METRICS_ADDRESS } } } });
  collectProcessMetrics();
  const metricsServer = config.workerMetricsPort ? startWorkerMetricsServer(config.workerMetricsPort, `http://${TEMPORAL_METRICS_ADDRESS}/metrics`) : undefined;
  const db = createDb(config.databaseUrl, config.databasePoolSize);
  const connection = await connectWorker(config);
  const clientConnection = await connectTemporal(config);
  const client = new Client({ connection: clientConnection, namespace: config.temporalNamespace });
  await ensureSchedules(client, config.temporalTaskQueue);
  const worker = await createWorker({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.temporalTaskQueue,
    deps: { db, logger, clock: { now: () => new Date() }, temporal: { client, taskQueue: config.temporalTaskQueue } },
    maxConcurrentActivities: config.databasePoolSize,
  });
  logger.info({ taskQueue: config.temporalTaskQueue, namespace: config.temporalNamespace }, 'worker polling');
  await worker.run();
  await db.$disconnect();
  await connection.close();
  await clientConnection.close();
  metricsServer?.close();
  logger.info('worker stopped');
}

main().catch((err) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});
