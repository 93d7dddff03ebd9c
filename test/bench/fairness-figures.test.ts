// The fairness phase's reading of what it measured (bench/fairness-figures.ts): latency
// percentiles in which a delivery that never arrived is infinitely late, and the trend of the
// worker's memory.
import assert from 'node:assert/strict';
import { latencyFigures, memoryFigures, residentMiB, slopePerMinute } from '../../bench/fairness-figures';

describe('bench/fairness-figures', () => {
  it('takes nearest-rank percentiles of the deliveries when all arrived', () => {
    const latencies = Array.from({ length: 100 }, (_, i) => 100 - i);
    assert.deepEqual(latencyFigures(latencies, 100), {
      expected: 100,
      received: 100,
      lost: 0,
      p50Ms: 50,
      p95Ms: 95,
      p99Ms: 99,
      maxMs: 100,
    });
  });

  it('counts a delivery that never arrived as infinitely late', () => {
    const received = Array.from({ length: 199 }, (_, i) => i + 1);
    const oneLost = latencyFigures(received, 200);
    assert.equal(oneLost.lost, 1);
    assert.equal(oneLost.p99Ms, 198, 'one missing in 200 leaves the p99 among the arrivals');
    assert.equal(oneLost.maxMs, 199, 'the max is of what arrived');
    const threeLost = latencyFigures(received.slice(0, 197), 200);
    assert.equal(threeLost.p99Ms, Infinity, 'three missing in 200 is more than 1 %');
    assert.equal(threeLost.p50Ms, 100);
  });

  it('has no percentiles when nothing was due', () => {
    const none = latencyFigures([], 0);
    assert.ok(Number.isNaN(none.p99Ms) && Number.isNaN(none.maxMs));
    assert.equal(none.lost, 0);
  });

  it('fits the memory trend per minute by least squares', () => {
    const rising = Array.from({ length: 13 }, (_, i) => ({ atS: i * 5, rssMiB: 100 + i * 0.25 }));
    assert.equal(slopePerMinute(rising), 3, '0.25 MiB every 5 s');
    // A sawtooth of 30 MiB (the heap growing and collected) around a level is flat.
    const sawtooth = Array.from({ length: 60 }, (_, i) => ({ atS: i * 5, rssMiB: 200 + (i % 4) * 10 }));
    assert.ok(Math.abs(slopePerMinute(sawtooth)) < 1, String(slopePerMinute(sawtooth)));
    assert.ok(Number.isNaN(slopePerMinute([{ atS: 0, rssMiB: 1 }])));
  });

  it('takes the trend over the window only, and start, peak and end over every sample', () => {
    const samples = [
      { atS: 0, rssMiB: 150 },
      { atS: 30, rssMiB: 260 },
      { atS: 60, rssMiB: 250 },
      { atS: 120, rssMiB: 250 },
      { atS: 180, rssMiB: 250 },
      { atS: 240, rssMiB: 240 },
    ];
    const figures = memoryFigures(samples, 60, 180);
    assert.equal(figures.slopeMiBPerMinute, 0, 'the warm-up before 60 s is left out');
    assert.deepEqual(
      { start: figures.startMiB, max: figures.maxMiB, end: figures.endMiB, window: figures.window },
      { start: 150, max: 260, end: 240, window: { fromS: 60, toS: 180, samples: 3 } },
    );
  });

  it('reads VmRSS from /proc/<pid>/status in MiB', () => {
    const status = 'Name:\tnode\nVmPeak:\t 1200000 kB\nVmRSS:\t  204800 kB\nRssAnon:\t  150000 kB\n';
    assert.equal(residentMiB(status), 200);
    assert.equal(residentMiB('Name:\tkthreadd\n'), undefined);
  });
});
