// The ingestion phase's rows (bench/ingestion.ts measures, bench/run.ts runs the phase), apart so
// that their unit tests need no stack. The API is measured twice beside the same floor: with the
// worker paused (the bar's condition: the API and the floor have the machine alike) and with the
// worker turning the accepted events into lifecycles meanwhile, as when a settlement file arrives
// during the day. The second pair of rows is there so that a recorded run keeps what the pipeline
// leaves the intake of 2 cores, next to what the intake does alone.
import type { IngestionResult } from './ingestion';
import type { Row } from './report';

export interface IngestionPhaseResult {
  /** The bare floor server: one insert per batch. */
  ingestionFloor: IngestionResult;
  /** The API with the worker paused. */
  ingestion: IngestionResult;
  /** The API with the worker running. */
  ingestionBusy: IngestionResult;
  /** Events of the idle measurement handed over (admitted, or out of the queue) by its end. */
  handedOver: number;
  /**
   * Events handed over during the worker-running measurement (the phase's, oldest first: mostly
   * the idle measurement's backlog): the lifecycles' pace beside the intake.
   */
  handedOverBusy?: number;
  /** The bench issuer's backlog limit during the phase. */
  backlogLimit: number;
}

/**
 * Why the worker-running rows carry no target: DESIGN.md's bar compares the intake with a floor
 * that has the machine to itself, and decision 0019 takes the API's share of 2 cores with
 * Temporal and the worker as this machine's, not the code's.
 */
export const WORKER_RUNNING_NOTE =
  'informative: the bar is the worker-idle row (decision 0019: on one machine the intake shares 2 cores with the worker, Temporal and their PostgreSQL work)';

const pct = (value: number, floor: number) => (floor > 0 ? (value / floor) * 100 : 0);

export function ingestionRows(r: IngestionPhaseResult): Row[] {
  const { ingestion, ingestionFloor, ingestionBusy } = r;
  const perSecond = (events: number, seconds: number) => Math.round(events / seconds);
  return [
    {
      figure: 'Ingestion: settled events accepted (worker idle)',
      value: ingestion.eventsPerSecond,
      floor: ingestionFloor.eventsPerSecond,
      unit: 'events/s',
      target: { op: '>=', value: 5000 },
      note: `${ingestion.batches} batches, ${ingestion.errors} errors; handed over meanwhile: ${perSecond(r.handedOver, ingestion.seconds)}/s; the issuer's backlog limit raised to ${r.backlogLimit.toLocaleString('en-US')} for the phase`,
    },
    {
      figure: 'Ingestion: floor (bare server, one insert)',
      value: ingestionFloor.eventsPerSecond,
      unit: 'events/s',
      note: `p99 ${Math.round(ingestionFloor.batchP99Ms)} ms`,
    },
    {
      figure: 'Ingestion / floor',
      value: pct(ingestion.eventsPerSecond, ingestionFloor.eventsPerSecond),
      unit: '%',
      target: { op: '>=', value: 33 },
    },
    { figure: 'Ingestion: batch latency p50', value: ingestion.batchP50Ms, unit: 'ms' },
    {
      figure: 'Ingestion: batch latency p99',
      value: ingestion.batchP99Ms,
      unit: 'ms',
      target: { op: '<=', value: 100 },
    },
    {
      figure: 'Ingestion, worker running meanwhile',
      value: ingestionBusy.eventsPerSecond,
      floor: ingestionFloor.eventsPerSecond,
      unit: 'events/s',
      note: [
        `${ingestionBusy.batches} batches, ${ingestionBusy.errors} errors`,
        ...(r.handedOverBusy === undefined
          ? []
          : [`handed over meanwhile: ${perSecond(r.handedOverBusy, ingestionBusy.seconds)}/s`]),
        `${Math.round(pct(ingestionBusy.eventsPerSecond, ingestion.eventsPerSecond))} % of the worker-idle figure`,
      ].join('; '),
    },
    {
      figure: 'Ingestion, worker running / floor',
      value: pct(ingestionBusy.eventsPerSecond, ingestionFloor.eventsPerSecond),
      unit: '%',
      note: WORKER_RUNNING_NOTE,
    },
    {
      figure: 'Ingestion, worker running: batch latency p99',
      value: ingestionBusy.batchP99Ms,
      unit: 'ms',
      note: `p50 ${Math.round(ingestionBusy.batchP50Ms)} ms; ${WORKER_RUNNING_NOTE}`,
    },
  ];
}
