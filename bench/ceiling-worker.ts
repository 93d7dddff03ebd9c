// A worker process for the ceiling workflows (bench/ceiling-workflows.ts) on a task queue of
// its own, with the same worker options as the real one (activity concurrency = pool size).
import { Client } from '@temporalio/client';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { loadConfig, requireConnections } from '../core/config';
import { connectTemporal, connectWorker } from '../worker/connection';
import { createCeilingActivities } from './ceiling-activities';

async function main(): Promise<void> {
  const config = requireConnections(loadConfig());
  const taskQueue = process.env.BENCH_CEILING_TASK_QUEUE ?? 'bench-ceiling';
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const connection = await connectWorker(config);
  const clientConnection = await connectTemporal(config);
  const client = new Client({ connection: clientConnection, namespace: config.temporalNamespace });
  const worker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue,
    workflowsPath: require.resolve('./ceiling-workflows'),
    activities: createCeilingActivities({ client, taskQueue }),
    maxConcurrentActivityTaskExecutions: config.databasePoolSize,
  });
  const running = worker.run();
  process.send?.({ ready: true });
  await running;
  await connection.close();
  await clientConnection.close();
}

main().catch((err) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});
