// Workflow engines for tests: the settings an empty environment configures (core/config.ts is
// the one source of defaults), with a test's own values where it needs them; and what a run
// was actually started with, to show a configured value reached it.
import type { Client, WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { loadConfig } from '../../core/config';
import { workflowSettings, type WorkflowEngine, type WorkflowSettings } from '../../core/workflow-engine';

export function testEngine(
  client: Client,
  taskQueue: string,
  settings: Partial<WorkflowSettings> = {},
): WorkflowEngine {
  return { client, taskQueue, settings: { ...workflowSettings(loadConfig({})), ...settings } };
}

/** The input a run was started with, read from its history (what the server stored, not what a test meant). */
export async function startInput<T>(handle: WorkflowHandle): Promise<T> {
  const started = (await handle.fetchHistory()).events?.[0]?.workflowExecutionStartedEventAttributes;
  const payload = started?.input?.payloads?.[0];
  if (!payload) throw new Error(`run ${handle.workflowId} has no start input`);
  return defaultPayloadConverter.fromPayload<T>(payload);
}
