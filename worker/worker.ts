// Builds the worker: the bundled workflows of workflows/ (prebuilt by `npm run build`, else
// bundled at start: worker/workflow-source.ts) and the activities of activities/.
import { Worker, type NativeConnection } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../activities';
import { ActivityFailureCounter } from './metrics-interceptor';
import { FORCE_AFTER_GRACE_MS } from './shutdown';
import { workflowSource } from './workflow-source';
import { workerTracing } from './tracing';
import { createHandoverRelease, type HandoverRelease } from './handover-release';
import type { Tracing } from '../core/tracing';

export { WORKFLOWS_PATH } from './workflow-source';

export async function createWorker(options: {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  /** Activities each hold a database connection: more at once than the pool has only queue. */
  maxConcurrentActivities?: number;
  /**
   * On shutdown, running activities get this long to finish; then they are cancelled, and
   * FORCE_AFTER_GRACE_MS later the worker gives up on them (run() rejects). Absent: the SDK's
   * 0, activities cancelled at once (tests).
   */
  shutdownGraceMs?: number;
  /** Tracing (core/tracing.ts): its interceptors and span sink when enabled. */
  tracing?: Tracing;
  /** Called when purchases gave their places under the hand-over bound back (the watch's wake). */
  onHandoverReleased?: () => void;
  /** The release its hand-over sinks report to, for a caller that flushes it at shutdown; else its own. */
  handoverRelease?: HandoverRelease;
}): Promise<Worker> {
  const traced = workerTracing(options.tracing ?? { enabled: false, shutdown: async () => undefined });
  const release =
    options.handoverRelease ?? createHandoverRelease({ ...options.deps, onReleased: options.onHandoverReleased });
  const worker = await Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    ...workflowSource(undefined, undefined, traced.workflowModules.length > 0),
    activities: createActivities(options.deps),
    maxConcurrentActivityTaskExecutions: options.maxConcurrentActivities ?? 10,
    // The lifecycle's postings are local activities, each one database transaction: as for
    // activities, more at once than the pool has connections would only queue.
    maxConcurrentLocalActivityExecutions: options.maxConcurrentActivities ?? 10,
    interceptors: {
      activity: [() => ({ inbound: new ActivityFailureCounter() }), ...traced.activity],
      workflowModules: traced.workflowModules,
    },
    sinks: { ...release.sinks, ...(traced.sinks ?? {}) },
    ...(options.shutdownGraceMs === undefined
      ? {}
      : {
          shutdownGraceTime: options.shutdownGraceMs,
          shutdownForceTime: options.shutdownGraceMs + FORCE_AFTER_GRACE_MS,
        }),
  });
  return release.attach(worker);
}
