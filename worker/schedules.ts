// Temporal Schedules the service needs, created at worker start when missing.
import { ScheduleOverlapPolicy, type Client } from '@temporalio/client';

export const HANDOVER_SWEEPER_SCHEDULE_ID = 'rewards-handover-sweeper';

export async function ensureSchedules(client: Client, taskQueue: string): Promise<void> {
  await ensureSchedule(client, HANDOVER_SWEEPER_SCHEDULE_ID, 'handoverSweeper', taskQueue, '1 minute');
}

async function ensureSchedule(client: Client, scheduleId: string, workflowType: string, taskQueue: string, every: string): Promise<void> {
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
