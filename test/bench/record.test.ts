// bench/history.ndjson is the record the documents cite (docs/benchmarks.md): each line must
// parse, name its source, and carry for every figure a value and unit, with floor and ratio
// where the figure is measured against a floor. New lines come from `npm run bench -- --record`.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { HISTORY_FILE, historyFigure, historyLine, parseBenchArgs, type HistoryLine } from '../../bench/record';
import type { Row } from '../../bench/report';

const machine = {
  cpuModel: 'test',
  cores: 2,
  memoryGiB: 4,
  node: 'v20',
  platform: 'linux',
  loadAverage1m: 0.5,
};

describe('bench/record', () => {
  it('keeps a figure measured against a floor with the floor and the ratio', () => {
    const row: Row = { figure: 'Reads: reward-detail', value: 3000, unit: 'req/s', floor: 6000 };
    assert.deepEqual(historyFigure(row), { value: 3000, unit: 'req/s', floor: 6000, ratioPct: 50 });
  });

  it('keeps a target and whether it was met, and an infinite value as null', () => {
    const row: Row = { figure: 'p99', value: Infinity, unit: 'ms', target: { op: '<=', value: 1000 } };
    assert.deepEqual(historyFigure(row), {
      value: null,
      unit: 'ms',
      target: { op: '<=', value: 1000 },
      met: false,
    });
  });

  it('writes one line with time, commit, machine, load, log level and every figure', () => {
    const line = historyLine({
      time: new Date('2026-11-25T10:00:00Z'),
      commit: { commit: 'abc', dirty: false },
      machine,
      load: { floor: 1.2 },
      logLevel: 'info',
      config: { backlog: 5000 },
      calibration: false,
      seconds: 2700.4,
      phaseSeconds: { floor: 95 },
      rows: [{ figure: 'Sustained: lifecycle / floor', value: 80, unit: '%', target: { op: '>=', value: 75 } }],
    });
    const parsed = JSON.parse(JSON.stringify(line)) as HistoryLine;
    assert.equal(parsed.time, '2026-11-25T10:00:00.000Z');
    assert.equal(parsed.commit, 'abc');
    assert.deepEqual(parsed.load, { atStart: 0.5, floor: 1.2 });
    assert.equal(parsed.logLevel, 'info');
    assert.equal(parsed.seconds, 2700);
    assert.deepEqual(parsed.phaseSeconds, { floor: 95 });
    assert.equal(parsed.calibration, undefined);
    assert.equal(parsed.figures['Sustained: lifecycle / floor'].met, true);
    assert.equal(parsed.source, 'npm run bench -- --record');
  });

  it('marks a calibration run as such, so that the report keeps it apart', () => {
    const line = historyLine({
      time: new Date('2026-11-25T10:00:00Z'),
      commit: { commit: 'abc', dirty: false },
      machine,
      load: {},
      logLevel: 'info',
      config: { tracingCalibration: true },
      calibration: true,
      seconds: 60,
      phaseSeconds: {},
      rows: [],
    });
    assert.equal(line.calibration, true);
  });

  it('takes --record and refuses anything else', () => {
    assert.deepEqual(parseBenchArgs([]), { record: false });
    assert.deepEqual(parseBenchArgs(['--record']), { record: true });
    assert.throws(() => parseBenchArgs(['--recrod']), /unknown argument --recrod/);
  });

  it('takes --only with a phase that runs alone, and never records such a run', () => {
    assert.deepEqual(parseBenchArgs(['--only', 'fairness']), { record: false, only: 'fairness' });
    assert.deepEqual(parseBenchArgs(['--only=fairness']), { record: false, only: 'fairness' });
    assert.deepEqual(parseBenchArgs(['--only', 'tracing']), { record: false, only: 'tracing' });
    assert.deepEqual(parseBenchArgs(['--only', 'ingestion']), { record: false, only: 'ingestion' });
    assert.deepEqual(parseBenchArgs(['--only', 'reads']), { record: false, only: 'reads' });
    assert.deepEqual(parseBenchArgs(['--only', 'overload']), { record: false, only: 'overload' });
    assert.deepEqual(parseBenchArgs(['--only', 'issuer-fairness']), { record: false, only: 'issuer-fairness' });
    assert.deepEqual(parseBenchArgs(['--only', 'payouts']), { record: false, only: 'payouts' });
    assert.deepEqual(parseBenchArgs(['--only', 'budgets']), { record: false, only: 'budgets' });
    assert.deepEqual(parseBenchArgs(['--only', 'statements']), { record: false, only: 'statements' });
    assert.deepEqual(parseBenchArgs(['--only', 'targeting']), { record: false, only: 'targeting' });
    assert.deepEqual(parseBenchArgs(['--only', 'audit']), { record: false, only: 'audit' });
    assert.throws(
      () => parseBenchArgs(['--only', 'floor']),
      /--only takes fairness, tracing, ingestion, reads, overload, issuer-fairness, payouts, budgets, statements, targeting, audit \(got floor\)/,
    );
    assert.throws(() => parseBenchArgs(['--only']), /got nothing/);
    assert.throws(() => parseBenchArgs(['--record', '--only', 'fairness']), /--record keeps whole runs only/);
    assert.throws(() => parseBenchArgs(['--record', '--only', 'tracing']), /--record keeps whole runs only/);
  });
});

describe('bench/history.ndjson', () => {
  const lines = readFileSync(HISTORY_FILE, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as HistoryLine & { recordedIn?: string });

  it('holds runs, each naming where it came from', () => {
    assert.ok(lines.length > 0);
    for (const line of lines) {
      assert.equal(line.schema, 1);
      // Kept since the bench ran at the service's default level; older lines ran at warn.
      if (line.logLevel !== undefined) assert.match(line.logLevel, /^(fatal|error|warn|info|debug|trace|silent)$/);
      assert.ok(['npm run bench -- --record', 'transcribed from README'].includes(line.source), line.source);
      if (line.source === 'npm run bench -- --record') {
        assert.match(line.time, /^\d{4}-\d\d-\d\dT/);
        // The report tells calibration runs apart by this flag (bench/history-report.ts).
        if (line.config?.tracingCalibration === true) assert.equal(line.calibration, true);
      } else {
        // A transcribed run names the commit whose README recorded it.
        assert.match(line.recordedIn ?? '', /^[0-9a-f]{40}$/);
      }
    }
  });

  it('gives every figure a value and a unit, and a ratio that agrees with its floor', () => {
    for (const line of lines) {
      for (const [name, figure] of Object.entries(line.figures)) {
        assert.ok(figure.value === null || typeof figure.value === 'number', name);
        assert.equal(typeof figure.unit, 'string', name);
        if (figure.floor !== undefined && figure.value !== null) {
          assert.ok(Math.abs((figure.value / figure.floor) * 100 - (figure.ratioPct ?? NaN)) < 0.1, name);
        }
      }
    }
  });
});
