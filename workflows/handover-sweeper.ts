// HandoverSweeper: run by a Temporal Schedule every minute. Hands over stored events that
// never reached their workflow (Temporal was down when they were accepted, or the API
// process died between commit and hand-over). The API hands over right after the commit;
// this is the safety net: one activity per run hands over up to 5,000 events page by page
// (activities/sweeper.ts), and the next run a minute later takes the rest.
import { proxyActivities } from '@temporalio/workflow';
import type { SweepActivities, SweepResult } from '../activities/sweeper';
import { sweepOptions } from './activity-options';

const { sweepHandovers } = proxyActivities<SweepActivities>(sweepOptions);

export async function handoverSweeper(): Promise<SweepResult> {
  return sweepHandovers({ olderThanMs: 30_000, limit: 5000 });
}
