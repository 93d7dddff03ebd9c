// Replays recorded workflow histories against the current workflow code. A replay that
// diverges means the code change is not deterministic for workflows already running: it
// needs a patched() guard (STYLE.md, habit 5).
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Worker } from '@temporalio/worker';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import type { temporal } from '@temporalio/proto';
import { WORKFLOWS_PATH } from '../../worker/worker';
import { workerTracing } from '../../worker/tracing';
import { NO_HANDOVER_RELEASE } from '../../worker/handover-release';
import type { Tracing } from '../../core/tracing';

type History = temporal.api.history.v1.IHistory;

export interface ReplayOutcome {
  workflowId: string;
  ok: boolean;
  error?: string;
}

export function loadHistoryDir(dir: string): Array<{ workflowId: string; history: History }> {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => ({
      workflowId: basename(file, '.json'),
      history: historyFromJSON(JSON.parse(readFileSync(join(dir, file), 'utf8'))),
    }));
}

/**
 * `tracing`: with OpenTelemetry's workflow interceptors and span sink installed, as a worker
 * that traces runs them (worker/tracing.ts): they must not change what a workflow commands.
 */
export async function replayHistories(
  histories: Array<{ workflowId: string; history: History }>,
  workflowsPath: string = WORKFLOWS_PATH,
  tracing?: Tracing,
): Promise<ReplayOutcome[]> {
  const outcomes: ReplayOutcome[] = [];
  const traced = tracing ? workerTracing(tracing) : undefined;
  const options = {
    workflowsPath,
    replayName: 'rewards-replay',
    sinks: { ...NO_HANDOVER_RELEASE, ...(traced?.sinks ?? {}) },
    ...(traced ? { interceptors: { workflowModules: traced.workflowModules } } : {}),
  };
  for await (const result of Worker.runReplayHistories(options, histories)) {
    outcomes.push({
      workflowId: result.workflowId,
      ok: !result.error,
      error: result.error ? `${result.error.name}: ${result.error.message}` : undefined,
    });
  }
  return outcomes;
}
