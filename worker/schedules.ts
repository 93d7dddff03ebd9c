// Temporal Schedules the service needs, created at worker start when missing.
import { ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { EXPIRE_GRANTS_WORKFLOW_TYPE } from '../workflows/expire-grants-contract';
import { HANDOVER_SWEEPER_WORKFLOW_TYPE } from '../workflows/handover-sweeper-contract';
import { WEBHOOK_RETENTION_WORKFLOW_TYPE } from '../workflows/webhook-retention-contract';

export const HANDOVER_SWEEPER_SCHEDULE_ID = 'rewards-handover-sweeper';
// Grants expire on a day boundary of their own; an hour late is within what a cardholder
// notices, and spend eligibility already ignores expired grants before the job runs.
export const EXPIRE_GRANTS_SCHEDULE_ID = 'rewards-expire-grants';
// Retention is counted in days: hourly deletes each record within an hour of its due time, in
// runs an hour's writes long, so the deletes come as a steady trickle rather than a daily burst.
export const WEBHOOK_RETENTION_SCHEDULE_ID = 'rewards-webhook-retention';

export async function ensureSchedules(client: Client, taskQueue: string): Promise<void> {
  await ensureSchedule(client, HANDOVER_SWEEPER_SCHEDULE_ID, HANDOVER_SWEEPER_WORKFLOW_TYPE, taskQueue, '1 minute');
  await ensureSchedule(client, EXPIRE_GRANTS_SCHEDULE_ID, EXPIRE_GRANTS_WORKFLOW_TYPE, taskQueue, '1 hour');
  await ensureSchedule(client, WEBHOOK_RETENTION_SCHEDULE_ID, WEBHOOK_RETENTION_WORKFLOW_TYPE, taskQueue, '1 hour');
}

async function ensureSchedule(
  client: Client,
  scheduleId: string,
  workflowType: string,
  taskQueue: string,
  every: string,
): Promise<void> {
  try {
    await client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every }] },
      // A slow run must not pile up copies of itself.
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
      action: { type: 'startWorkflow', workflowType, taskQueue, args: [] },
    });
  } catch (err) {
    if ((err as Error).name !== 'ScheduleAlreadyRunning') throw err;
  }
}
