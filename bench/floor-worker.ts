// The worker process of the floor phase (bench/floor-workflows.ts), on a task queue of its
// own, with the real worker's Temporal settings. Each completed floor workflow is reported
// to the bench process over IPC, as the receiver reports each real purchase's webhook.
import { DefaultLogger, Runtime, Worker, type InjectedSinks } from '@temporalio/worker';
import { loadConfig, requireConnections } from '../core/config';
import { connectWorker } from '../core/temporal-connection';
import type { FloorSinks } from './floor-workflows';

async function main(): Promise<void> {
  const config = requireConnections(loadConfig());
  const taskQueue = process.env.BENCH_FLOOR_TASK_QUEUE ?? 'bench-floor';
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const connection = await connectWorker(config);
  const sinks: InjectedSinks<FloorSinks> = {
    bench: { completed: { fn: () => void process.send?.({ completed: 1 }), callDuringReplay: false } },
  };
  const worker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue,
    workflowsPath: require.resolve('./floor-workflows'),
    sinks,
  });
  const running = worker.run();
  process.send?.({ ready: true });
  await running;
  await connection.close();
}

main().catch((err) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});
