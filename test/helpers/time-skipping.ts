// A time-skipping Temporal test server (the Java test server from PyPI) with a worker that
// runs our real workflows and activities against the run's real PostgreSQL.
import { randomUUID } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { findTestServer } from '../../scripts/lib/temporal-dev-server';
import { createActivities, type ActivityDeps } from '../../activities';
import { WORKFLOWS_PATH } from '../../worker/worker';
import { createLogger } from '../../core/logger';
import type { Db } from '../../prisma/client';
import { registerSearchAttributes } from '../../worker/register-search-attributes';
import type { WorkflowEngine, WorkflowSettings } from '../../core/workflow-engine';
import { testEngine } from './engine';
import { testWebhookDestinations, testWebhookSecretKeys } from './env';

export interface TimeSkippingStack {
  env: TestWorkflowEnvironment;
  taskQueue: string;
  /** The time-skipping client with the stack's settings, for starters under test (hand-over, relay). */
  engine: WorkflowEngine;
  /** Runs `fn` with a fresh worker polling (a Worker instance runs only once). */
  withWorker<T>(fn: () => Promise<T>): Promise<T>;
  teardown(): Promise<void>;
}

export async function startTimeSkipping(
  db: Db,
  options: { faults?: ActivityDeps['faults']; settings?: Partial<WorkflowSettings> } = {},
): Promise<TimeSkippingStack> {
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: findTestServer() } },
  });
  await registerSearchAttributes(env.connection);
  const taskQueue = `ts-${randomUUID()}`;
  const engine = testEngine(env.client, taskQueue, options.settings);
  const activities = createActivities({
    db,
    logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'),
    clock: { now: () => new Date() },
    temporal: engine,
    faults: options.faults,
    webhookDestinations: testWebhookDestinations,
    webhookSecretKeys: testWebhookSecretKeys,
  });
  return {
    env,
    taskQueue,
    engine,
    async withWorker(fn) {
      const worker = await Worker.create({
        connection: env.nativeConnection,
        taskQueue,
        workflowsPath: WORKFLOWS_PATH,
        activities,
      });
      return worker.runUntil(fn);
    },
    teardown: () => env.teardown(),
  };
}
