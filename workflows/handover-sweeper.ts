// HandoverSweeper: run by a Temporal Schedule every minute. Hands over stored events that
// never reached their workflow (Temporal was down when they were accepted, or the API
// process died between commit and hand-over). The API hands over right after the commit;
// this is the safety net, so one bounded batch per run is enough.
import { proxyActivities } from '@temporalio/workflow';
import type { SweepActivities } from '../activities/sweeper';
import { sweepOptions } from './activity-options';

const { sweepHandovers } = proxyActivities<SweepActivities>(sweepOptions);

export async function handoverSweeper(): Promise<{ handedOver: number; failed: number }> {
  return sweepHandovers({ olderThanMs: 30_000, limit: 1000 });
}
