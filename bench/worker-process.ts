// The real worker for the benchmark: worker/main.ts without its fixed-port metrics
// endpoints (a second stack on the machine would collide on them), same createWorker, same
// activities, same schedules, same pool size. Tells the parent over IPC when it polls.
import { Client } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig, requireConnections } from '../core/config';
import { createLogger } from '../core/logger';
import { createDb } from '../prisma/client';
import { connectTemporal, connectWorker } from '../worker/connection';
import { ensureSchedules } from '../worker/schedules';
import { createWorker } from '../worker/worker';

async function main(): Promise<void> {
  const config = requireConnections(loadConfig());
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const logger = createLogger(config.logLevel, 'worker');
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
  const running = worker.run();
  process.send?.({ ready: true });
  await running;
  await db.$disconnect();
  await connection.close();
  await clientConnection.close();
}

main().catch((err) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});
