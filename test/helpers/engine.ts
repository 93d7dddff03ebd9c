// Workflow engines for tests: the settings an empty environment configures (core/config.ts is
// the one source of defaults), with a test's own values where it needs them; what a run was
// actually started with, to show a configured value reached it; and what a test's worker runs
// its activities with.
import type { Client, WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { loadConfig } from '../../core/config';
import { createLogger } from '../../core/logger';
import { workflowSettings, type WorkflowEngine, type WorkflowSettings } from '../../core/workflow-engine';
import type { ActivityDeps } from '../../activities';
import type { Db } from '../../prisma/client';
import { testWebhookDestinations, testWebhookSecretKeys } from './env';

export function testEngine(
  client: Client,
  taskQueue: string,
  settings: Partial<WorkflowSettings> = {},
): WorkflowEngine {
  return { client, taskQueue, settings: { ...workflowSettings(loadConfig({})), ...settings } };
}

/**
 * The dependencies of a test worker's activities (createWorker, createActivities): `db`, starters
 * on `engine`, real time, and the run's webhook destinations and key, unless the test gives others.
 */
export function testActivityDeps(db: Db, engine: WorkflowEngine, overrides: Partial<ActivityDeps> = {}): ActivityDeps {
  return {
    db,
    logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'),
    clock: { now: () => new Date() },
    temporal: engine,
    webhookDestinations: testWebhookDestinations,
    webhookSecretKeys: testWebhookSecretKeys,
    ...overrides,
  };
}

/** The input a run was started with, read from its history (what the server stored, not what a test meant). */
export async function startInput<T>(handle: WorkflowHandle): Promise<T> {
  const started = (await handle.fetchHistory()).events?.[0]?.workflowExecutionStartedEventAttributes;
  const payload = started?.input?.payloads?.[0];
  if (!payload) throw new Error(`run ${handle.workflowId} has no start input`);
  return defaultPayloadConverter.fromPayload<T>(payload);
}
