// The whole service for end-to-end tests: the API (with its real hand-over to Temporal)
// and a real worker on a task queue of its own, over the run's PostgreSQL and Temporal.
import { clientInterceptors, type Tracing } from '../../core/tracing';
import { randomUUID } from 'node:crypto';
import assert from 'node:assert/strict';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { createWorker } from '../../worker/worker';
import type { RelayOptions, WebhookRelay } from '../../worker/webhook-relay';
import { startHandoverWatch, type HandoverWatch, type HandoverWatchOptions } from '../../worker/handover-watch';
import { createLogger, type Logger } from '../../core/logger';
import { createDb, type Db } from '../../prisma/client';
import type { DatabaseTimeouts } from '../../prisma/bounded-client';
import { createApiHandover } from '../../api/ingestion/handover-queue';
import type { ActivityDeps } from '../../activities';
import type { WorkflowEngine, WorkflowSettings } from '../../core/workflow-engine';
import { testActivityDeps, testEngine } from './engine';
import { startTestRelay } from './webhooks';
import { startTestApp, type TestApp } from './app';
import { testDatabaseUrl, testTemporalAddress, testWebhookDestinations, testWebhookSecretKeys } from './env';

/**
 * HANDOVER_MAX_IN_FLIGHT of a test stack unless the test sets its own: the suite's files share one
 * database, where events that other files stored and never handed over wait; under the
 * deployment's bound a stack would hand those over a hundred at a time before its own. The tests
 * of admission itself pass a small bound (test/workflows/admission.e2e.test.ts).
 */
export const TEST_HANDOVER_MAX_IN_FLIGHT = 10_000;

/** The reward statuses a processed settlement ends in, for waitForStatus. */
export const FINAL_STATUSES = ['matched', 'not_matched', 'reversed', 'unknown'];

let runtimeQuiet = false;

/** Worker logs at WARN and above only; test output stays readable. Once per process. */
export function quietTemporalRuntime(): void {
  if (runtimeQuiet) return;
  runtimeQuiet = true;
  try {
    // Worker logs at WARN and above only; test output stays readable.
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Another test file already started a worker, and with it the runtime.
  }
}

export interface Stack {
  app: TestApp;
  db: Db;
  client: Client;
  taskQueue: string;
  /** The client, task queue and settings every starter of this stack uses. */
  engine: WorkflowEngine;
  /** The running worker; replaced by startWorker(). */
  worker: Worker;
  /** Shuts the worker down (its polls end; workflows wait for the next one). */
  stopWorker(): Promise<void>;
  /** Starts a new worker on the same task queue, with the same dependencies, after stopWorker(). */
  startWorker(): Promise<void>;
  /** Polls the stored event until its reward status is one of `statuses`. */
  waitForStatus(eventId: string, statuses: string[], timeoutMs?: number): Promise<string>;
  /**
   * Polls until none of the events has a row in the hand-over queue: processed, and their
   * workflows gone idle (worker/handover-release.ts gives the places back just after the step).
   */
  waitUntilReleased(eventIds: string[], timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startStack(
  options: {
    faults?: ActivityDeps['faults'];
    clock?: { now(): Date };
    temporalAddress?: string;
    relay?: Partial<RelayOptions>;
    /** Runs the worker's hand-over watch with these options (off by default: stacks share the database). */
    handoverWatch?: Partial<HandoverWatchOptions>;
    /** Workflow settings other than the defaults, for the API, the worker and the relay alike. */
    settings?: Partial<WorkflowSettings>;
    /** Where the worker, the relay and the API let webhooks go; loopback receivers by default. */
    webhookDestinations?: ActivityDeps['webhookDestinations'];
    /** WEBHOOK_SECRET_KEYS of the API, the worker and the relay; the tests' fixed key by default. */
    webhookSecretKeys?: ActivityDeps['webhookSecretKeys'];
    /** Tracing started by the test (core/tracing.ts): the clients' and the worker's interceptors. */
    tracing?: Tracing;
    /** The database of the API, the worker and the relay (the run's by default) and their connections' bounds. */
    database?: { url: string; timeouts?: DatabaseTimeouts };
    /** HANDOVER_MAX_IN_FLIGHT of the API's hand-over, the sweeper and the watch; TEST_HANDOVER_MAX_IN_FLIGHT when not given. */
    handoverMaxInFlight?: number;
    /** The logger of the API, the worker and the relay; silent (or TEST_LOG_LEVEL) by default. */
    logger?: Logger;
  } = {},
): Promise<Stack> {
  quietTemporalRuntime();
  const taskQueue = `test-${randomUUID()}`;
  const databaseUrl = options.database?.url ?? testDatabaseUrl();
  const databaseTimeouts = options.database?.timeouts;
  const db = createDb(databaseUrl, 10, databaseTimeouts);
  const logger = options.logger ?? createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
  const clientConnection = await Connection.connect({ address: options.temporalAddress ?? testTemporalAddress() });
  const client = new Client({
    connection: clientConnection,
    ...(options.tracing ? clientInterceptors(options.tracing) : {}),
  });
  const workerConnection = await NativeConnection.connect({
    address: options.temporalAddress ?? testTemporalAddress(),
  });
  const clock = options.clock ?? { now: () => new Date() };
  const handoverMaxInFlight = options.handoverMaxInFlight ?? TEST_HANDOVER_MAX_IN_FLIGHT;
  const engine = testEngine(client, taskQueue, options.settings);
  const webhookDestinations = options.webhookDestinations ?? testWebhookDestinations;
  const webhookSecretKeys = options.webhookSecretKeys ?? testWebhookSecretKeys;
  const relay: WebhookRelay = startTestRelay(
    db,
    engine,
    { logger, clock, databaseUrl, databaseTimeouts, webhookDestinations, webhookSecretKeys },
    options.relay,
  );
  // Declared before the worker, whose releases wake it.
  let handoverWatch: HandoverWatch | undefined;
  const newWorker = () =>
    createWorker({
      connection: workerConnection,
      namespace: 'default',
      taskQueue,
      deps: testActivityDeps(db, engine, {
        logger,
        clock,
        faults: options.faults,
        relay,
        webhookDestinations,
        webhookSecretKeys,
        handoverMaxInFlight,
      }),
      tracing: options.tracing,
      onHandoverReleased: () => handoverWatch?.wake(),
    });
  let worker = await newWorker();
  let running: Promise<void> | undefined = worker.run();
  async function stopWorker() {
    if (!running) return;
    worker.shutdown();
    await running;
    running = undefined;
  }
  handoverWatch =
    options.handoverWatch &&
    startHandoverWatch({ db, clock, temporal: engine, logger, handoverMaxInFlight }, options.handoverWatch);
  const handover = createApiHandover({ temporal: engine, db, clock }, logger, handoverMaxInFlight);
  const app = await startTestApp({ db, handover, temporal: engine, webhookDestinations, webhookSecretKeys, logger });
  return {
    app,
    db,
    client,
    taskQueue,
    engine,
    get worker() {
      return worker;
    },
    stopWorker,
    async startWorker() {
      assert.equal(running, undefined, 'stopWorker() first');
      worker = await newWorker();
      running = worker.run();
    },
    async waitForStatus(eventId, statuses, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const row = await db.ingestedEvent.findUnique({ where: { id: eventId }, select: { rewardStatus: true } });
        if (row && statuses.includes(row.rewardStatus)) return row.rewardStatus;
        assert.ok(
          Date.now() < deadline,
          `event ${eventId} stayed ${row?.rewardStatus}, expected ${statuses.join('|')}`,
        );
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async waitUntilReleased(eventIds, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const queued = await db.handoverPending.count({ where: { eventId: { in: eventIds } } });
        if (queued === 0) return;
        if (Date.now() >= deadline) {
          // What the rows say is where to look: never admitted, admitted and never processed, or unreleased.
          const rows = await db.handoverPending.findMany({ where: { eventId: { in: eventIds } }, take: 5 });
          assert.fail(`${queued} of ${eventIds.length} events stayed in the hand-over queue: ${JSON.stringify(rows)}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop() {
      await handover.drain();
      await app.close();
      await relay.stop();
      await handoverWatch?.stop();
      await stopWorker();
      await workerConnection.close();
      await clientConnection.close();
      await db.$disconnect();
    },
  };
}
