// The ingestion phase's rows (bench/ingestion-figures.ts): the worker-running measurement is
// recorded as rows of its own beside the worker-idle ones (its ratio to the same floor and its
// p99), so that the history keeps it; only the worker-idle rows carry DESIGN.md's targets.
import assert from 'node:assert/strict';
import { ingestionRows, WORKER_RUNNING_NOTE, type IngestionPhaseResult } from '../../bench/ingestion-figures';
import { historyFigure } from '../../bench/record';
import type { IngestionResult } from '../../bench/ingestion';

const measured = (eventsPerSecond: number, p50: number, p99: number): IngestionResult => ({
  eventsPerSecond,
  batchP50Ms: p50,
  batchP99Ms: p99,
  batches: Math.round((eventsPerSecond * 15) / 100),
  errors: 0,
  seconds: 15,
});

const phase: IngestionPhaseResult = {
  ingestionFloor: measured(60_000, 10, 40),
  ingestion: measured(21_000, 30, 110),
  ingestionBusy: measured(9_000, 120, 240),
  handedOver: 480,
  handedOverBusy: 675,
  backlogLimit: 100_000_000,
};

const byFigure = (rows: ReturnType<typeof ingestionRows>) => new Map(rows.map((r) => [r.figure, r]));

describe('bench/ingestion-figures', () => {
  it('keeps the worker-idle rows and their targets as they were', () => {
    const rows = byFigure(ingestionRows(phase));
    const idle = rows.get('Ingestion: settled events accepted (worker idle)')!;
    assert.equal(idle.value, 21_000);
    assert.equal(idle.floor, 60_000);
    assert.deepEqual(idle.target, { op: '>=', value: 5000 });
    assert.match(idle.note!, /handed over meanwhile: 32\/s/);
    assert.match(idle.note!, /100,000,000/);
    assert.equal(rows.get('Ingestion / floor')!.value, 35);
    assert.deepEqual(rows.get('Ingestion / floor')!.target, { op: '>=', value: 33 });
    assert.deepEqual(rows.get('Ingestion: batch latency p99')!.target, { op: '<=', value: 100 });
  });

  it('records the worker-running intake, its ratio to the floor and its p99 as rows of their own', () => {
    const rows = ingestionRows(phase);
    const names = rows.map((r) => r.figure);
    const busy = names.indexOf('Ingestion, worker running meanwhile');
    assert.deepEqual(names.slice(busy), [
      'Ingestion, worker running meanwhile',
      'Ingestion, worker running / floor',
      'Ingestion, worker running: batch latency p99',
    ]);
    assert.ok(busy > names.indexOf('Ingestion: batch latency p99'), 'after the worker-idle rows');
    const found = byFigure(rows);
    assert.equal(found.get('Ingestion, worker running / floor')!.value, 15);
    assert.equal(found.get('Ingestion, worker running: batch latency p99')!.value, 240);
    assert.match(found.get('Ingestion, worker running: batch latency p99')!.note!, /^p50 120 ms/);
    const events = found.get('Ingestion, worker running meanwhile')!;
    assert.match(events.note!, /handed over meanwhile: 45\/s/);
    assert.match(events.note!, /43 % of the worker-idle figure/);
  });

  it('gives the worker-running rows no target, and says why', () => {
    for (const row of ingestionRows(phase).filter((r) => r.figure.startsWith('Ingestion, worker running'))) {
      assert.equal(row.target, undefined, row.figure);
    }
    const ratio = byFigure(ingestionRows(phase)).get('Ingestion, worker running / floor')!;
    assert.equal(ratio.note, WORKER_RUNNING_NOTE);
    assert.match(WORKER_RUNNING_NOTE, /decision 0019/);
  });

  it('keeps the worker-running figures in the history line', () => {
    const figures = Object.fromEntries(ingestionRows(phase).map((r) => [r.figure, historyFigure(r)]));
    assert.deepEqual(figures['Ingestion, worker running meanwhile'], {
      value: 9000,
      unit: 'events/s',
      floor: 60_000,
      ratioPct: 15,
    });
    assert.deepEqual(figures['Ingestion, worker running / floor'], { value: 15, unit: '%' });
    assert.deepEqual(figures['Ingestion, worker running: batch latency p99'], { value: 240, unit: 'ms' });
  });

  it('leaves out the worker-running hand-over count of a run that did not take it', () => {
    const { handedOverBusy: _skipped, ...without } = phase;
    const events = byFigure(ingestionRows(without)).get('Ingestion, worker running meanwhile')!;
    assert.doesNotMatch(events.note!, /handed over/);
  });
});
