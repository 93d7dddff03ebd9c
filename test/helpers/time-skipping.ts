// Temporal's time-skipping test server (the Java test server from PyPI), for tests whose waits
// last days: the server skips its durable timers while our real workflows and activities run
// against the run's real PostgreSQL. Three sizes, smallest first: the server alone
// (startTimeSkippingServer, for a test that builds its own workers), the server with a worker of
// the real workflows and activities (startTimeSkipping), and the whole service on the server's
// skipped time (startTimeSkippingStack: the API with its hand-over, the worker and, when asked,
// the webhook relay).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { findTestServer } from '../../scripts/lib/temporal-dev-server';
import { createActivities, type ActivityDeps } from '../../activities';
import { createWorker, WORKFLOWS_PATH } from '../../worker/worker';
import { createHandoverRelease } from '../../worker/handover-release';
import { registerSearchAttributes } from '../../worker/register-search-attributes';
import { createApiHandover } from '../../api/ingestion/handover-queue';
import { createLogger } from '../../core/logger';
import { createDb, type Db } from '../../prisma/client';
import type { WorkflowEngine, WorkflowSettings } from '../../core/workflow-engine';
import { testActivityDeps, testEngine } from './engine';
import { testDatabaseUrl } from './env';
import { quietTemporalRuntime, TEST_HANDOVER_MAX_IN_FLIGHT } from './stack';
import { startTestApp, type TestApp } from './app';
import { startTestRelay } from './webhooks';

/** A fresh time-skipping server that knows our search attributes, as a namespace must before the first worker. */
export async function startTimeSkippingServer(): Promise<TestWorkflowEnvironment> {
  quietTemporalRuntime();
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: findTestServer() } },
  });
  await registerSearchAttributes(env.connection);
  return env;
}

/** A worker of the real workflows with these activities, on the engine's task queue (a Worker runs only once). */
export function workflowWorker(
  env: TestWorkflowEnvironment,
  engine: WorkflowEngine,
  activities: ReturnType<typeof createActivities>,
  db: Db,
): Promise<Worker> {
  const release = createHandoverRelease({ db, logger: createLogger('silent') });
  return Worker.create({
    connection: env.nativeConnection,
    taskQueue: engine.taskQueue,
    workflowsPath: WORKFLOWS_PATH,
    activities,
    sinks: release.sinks,
  }).then(release.attach);
}

export interface TimeSkippingWorker {
  env: TestWorkflowEnvironment;
  taskQueue: string;
  /** The time-skipping client with the stack's settings, for starters under test (hand-over, relay). */
  engine: WorkflowEngine;
  /** Runs `fn` with a fresh worker polling (a Worker instance runs only once). */
  withWorker<T>(fn: () => Promise<T>): Promise<T>;
  teardown(): Promise<void>;
}

/** The server with the real workflows and activities over `db`, on real time; the test drives the runs. */
export async function startTimeSkipping(
  db: Db,
  options: { faults?: ActivityDeps['faults']; settings?: Partial<WorkflowSettings> } = {},
): Promise<TimeSkippingWorker> {
  const env = await startTimeSkippingServer();
  const taskQueue = `ts-${randomUUID()}`;
  const engine = testEngine(env.client, taskQueue, options.settings);
  const activities = createActivities(testActivityDeps(db, engine, { faults: options.faults }));
  return {
    env,
    taskQueue,
    engine,
    async withWorker(fn) {
      return (await workflowWorker(env, engine, activities, db)).runUntil(fn);
    },
    teardown: () => env.teardown(),
  };
}

export interface TimeSkippingStack {
  env: TestWorkflowEnvironment;
  db: Db;
  /** The API, its hand-over and its runs (payouts...) on the server; it reads the service's clock. */
  app: TestApp;
  /** The client and task queue of the stack's worker, for runs a test starts itself. */
  engine: WorkflowEngine;
  /** The service's clock (the API's and the activities'): the server's time, read again after every skip. */
  now(): Date;
  /** Moves the server's time on by `ms`, firing the timers due, and the service's clock with it. */
  skip(ms: number): Promise<void>;
  /** Moves the server's time on to `atMs`, which must be ahead of it. */
  skipTo(atMs: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The whole service on the time-skipping server: the API with its hand-over and a worker (with
 * the webhook relay when `relay` is set) over the run's PostgreSQL, all on the server's time. That
 * time moves only when the test skips it, as a purchase dated on it needs; the relay alone signs
 * at real time, as a receiver checks the timestamp against its own clock.
 */
export async function startTimeSkippingStack(options: { relay?: boolean } = {}): Promise<TimeSkippingStack> {
  const env = await startTimeSkippingServer();
  const db = createDb(testDatabaseUrl(), 10);
  const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
  const engine = testEngine(env.client, `test-${randomUUID()}`);
  let nowMs = await env.currentTimeMs();
  const clock = { now: () => new Date(nowMs) };
  const worker = await createWorker({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue: engine.taskQueue,
    deps: testActivityDeps(db, engine, { logger, clock }),
  });
  const running = worker.run();
  const relay = options.relay ? startTestRelay(db, engine) : undefined;
  const handover = createApiHandover({ temporal: engine, db }, logger, TEST_HANDOVER_MAX_IN_FLIGHT);
  const app = await startTestApp({ db, handover, temporal: engine, clock });
  const skip = async (ms: number) => {
    await env.sleep(ms);
    nowMs = await env.currentTimeMs();
  };
  return {
    env,
    db,
    app,
    engine,
    now: clock.now,
    skip,
    async skipTo(atMs) {
      const current = await env.currentTimeMs();
      assert.ok(atMs > current, 'time only moves forward');
      await skip(atMs - current);
    },
    async stop() {
      await handover.drain();
      await app.close();
      await relay?.stop();
      worker.shutdown();
      await running;
      await db.$disconnect();
      await env.teardown();
    },
  };
}
