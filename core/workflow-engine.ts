// How a process starts workflows: the Temporal client, the task queue, and the configured
// settings that new runs take as their input. Every starter (the API's hand-over, the sweeper,
// reprocess, the webhook relay and replays) receives one, so none of them can start a run
// with a hard-coded value instead of the configured one.
import type { Client } from '@temporalio/client';
import type { Config } from './config';

/**
 * Values a run reads from its input at start and keeps for its whole life (the input is in
 * its history): a changed setting applies to runs started after the change, never to one
 * already waiting.
 */
export type WorkflowSettings = Pick<
  Config,
  'settlementTimeoutMs' | 'webhookRetryScheduleMs' | 'payoutChunkGroups' | 'statementChunkAccounts'
> & {
  /** Tests and the bench only: groups per enrolment-run chunk (absent: ENROLMENT_CHUNK_GROUPS). */
  enrolmentChunkGroups?: number;
};

export interface WorkflowEngine {
  client: Client;
  taskQueue: string;
  settings: WorkflowSettings;
}

export function workflowSettings(config: Config): WorkflowSettings {
  return {
    settlementTimeoutMs: config.settlementTimeoutMs,
    webhookRetryScheduleMs: [...config.webhookRetryScheduleMs],
    payoutChunkGroups: config.payoutChunkGroups,
    statementChunkAccounts: config.statementChunkAccounts,
  };
}
