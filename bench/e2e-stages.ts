// Where a purchase's ingestion-to-webhook time goes, read from its rows once it has arrived: from
// the start of its POST to the stored event's receipt (the API, up to its commit), then to its
// step's start (the hand-over, Temporal, the workflow task reaching the worker: the step's
// workflow time, which its webhook record carries), then to its webhook's first attempt (the
// step's transaction, the relay), then to the arrival. The API's, the worker's and the bench's
// clocks are this machine's.
import pg from 'pg';
import { percentile } from './load';

export const STAGES = ['api', 'handoverToStep', 'stepToAttempt', 'attemptToArrival'] as const;
export type Stage = (typeof STAGES)[number];

export interface StageLatency {
  p50Ms: number;
  p99Ms: number;
}

/** Stage latencies of the settled events of `prefix`, given when each POST started and each webhook arrived (epoch ms). */
export async function stageLatencies(
  databaseUrl: string,
  issuerId: string,
  prefix: string,
  sentAtEpochMs: ReadonlyMap<string, number>,
  arrivedAtEpochMs: ReadonlyMap<string, number>,
): Promise<Record<Stage, StageLatency>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ external_id: string; received_at: Date; step_at: Date; attempt_at: Date }>(
      `SELECT e.external_id, e.received_at, w.created_at AS step_at, min(a.started_at) AS attempt_at
         FROM ingested_event e
         JOIN webhook w ON w.source_event_id = e.id AND w.type = 'qualified_settlement'
         JOIN webhook_attempt a ON a.webhook_id = w.id AND a.attempt_number = 1
        WHERE e.issuer_id = $1 AND e.kind = 'settled' AND e.external_id LIKE $2
        GROUP BY e.external_id, e.received_at, w.created_at`,
      [issuerId, `${prefix}%`],
    );
    const samples: Record<Stage, number[]> = { api: [], handoverToStep: [], stepToAttempt: [], attemptToArrival: [] };
    for (const r of rows) {
      const sent = sentAtEpochMs.get(r.external_id);
      const arrived = arrivedAtEpochMs.get(r.external_id);
      if (sent === undefined || arrived === undefined) continue;
      samples.api.push(r.received_at.getTime() - sent);
      samples.handoverToStep.push(r.step_at.getTime() - r.received_at.getTime());
      samples.stepToAttempt.push(r.attempt_at.getTime() - r.step_at.getTime());
      samples.attemptToArrival.push(arrived - r.attempt_at.getTime());
    }
    const summary = (xs: number[]): StageLatency => ({ p50Ms: percentile(xs, 50), p99Ms: percentile(xs, 99) });
    return {
      api: summary(samples.api),
      handoverToStep: summary(samples.handoverToStep),
      stepToAttempt: summary(samples.stepToAttempt),
      attemptToArrival: summary(samples.attemptToArrival),
    };
  } finally {
    await client.end();
  }
}

/** "api 3/12, handoverToStep 20/60, ..." (p50/p99 ms), for a report's note. */
export function describeStages(stages: Record<Stage, StageLatency>): string {
  return STAGES.map((s) => `${s} ${Math.round(stages[s].p50Ms)}/${Math.round(stages[s].p99Ms)}`).join(', ');
}
