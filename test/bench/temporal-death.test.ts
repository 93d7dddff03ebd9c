// A whole run whose Temporal dev server dies keeps its figures, but the phase it died in and every
// phase after it are marked: no target, and a note that says why, in the table and in the history.
import assert from 'node:assert/strict';
import { afterTemporalDeath, temporalDeathTracker } from '../../bench/temporal-death';
import { historyFigure, historyLine } from '../../bench/record';
import { resultsSection, sizingSection, type HistoryRun } from '../../bench/history-report';
import type { Row } from '../../bench/report';

const machine = { cpuModel: 'test', cores: 2, memoryGiB: 4, node: 'v20', platform: 'linux', loadAverage1m: 0.5 };

const p99: Row = {
  figure: 'Issuer fairness: small issuer p99',
  value: Infinity,
  unit: 'ms',
  target: { op: '<=', value: 5000 },
  note: '83/240 received',
};
const accepted: Row = {
  figure: 'Ingestion: settled events accepted (worker idle)',
  value: 22829,
  unit: 'events/s',
  target: { op: '>=', value: 5000 },
};

describe('bench/temporal-death', () => {
  it('leaves the phases before the death alone, and marks the one it died in and every one after', () => {
    const tracker = temporalDeathTracker();
    assert.equal(tracker.seen('overload', undefined), undefined);
    assert.deepEqual(tracker.seen('issuerFairness', 'signal SIGSEGV'), {
      phase: 'issuerFairness',
      how: 'signal SIGSEGV',
      when: 'during',
    });
    // Still dead, or restarted since: the phases after it ran on a stack that had lost it.
    assert.deepEqual(tracker.seen('ingestion', 'signal SIGSEGV'), {
      phase: 'issuerFairness',
      how: 'signal SIGSEGV',
      when: 'before',
    });
    assert.deepEqual(tracker.seen('reads', undefined), {
      phase: 'issuerFairness',
      how: 'signal SIGSEGV',
      when: 'before',
    });
    assert.deepEqual(tracker.death, { phase: 'issuerFairness', how: 'signal SIGSEGV' });
  });

  it('keeps the rows of a phase untouched when the dev server lived', () => {
    assert.deepEqual(afterTemporalDeath([p99, accepted], undefined), [p99, accepted]);
  });

  it('drops the target of a row measured during or after the death, and says why in its note', () => {
    const [during] = afterTemporalDeath([p99], { phase: 'issuerFairness', how: 'signal SIGSEGV', when: 'during' });
    assert.equal(during.target, undefined);
    assert.equal(during.value, Infinity);
    assert.match(during.note!, /^83\/240 received; the Temporal dev server died during this phase \(signal SIGSEGV\)/);
    assert.match(during.notCounted!, /died during this phase \(signal SIGSEGV\)/);

    const [after] = afterTemporalDeath([accepted], { phase: 'issuerFairness', how: 'signal SIGSEGV', when: 'before' });
    assert.equal(after.target, undefined);
    assert.match(after.note!, /had died before this phase, in issuerFairness \(signal SIGSEGV\)/);
  });

  it('records the note in the history line, with where the server died, and no target to miss', () => {
    const tracker = temporalDeathTracker();
    const rows = [
      ...afterTemporalDeath([p99], tracker.seen('issuerFairness', 'signal SIGSEGV')),
      ...afterTemporalDeath([accepted], tracker.seen('ingestion', 'signal SIGSEGV')),
    ];
    const line = historyLine({
      time: new Date('2026-12-01T19:00:00Z'),
      commit: { commit: 'd3ffa6a', dirty: false },
      machine,
      load: {},
      logLevel: 'info',
      config: {},
      calibration: false,
      seconds: 2712,
      phaseSeconds: {},
      temporalDied: tracker.death,
      rows,
    });
    assert.deepEqual(line.temporalDied, { phase: 'issuerFairness', how: 'signal SIGSEGV' });
    const fairness = line.figures['Issuer fairness: small issuer p99'];
    assert.equal(fairness.value, null);
    assert.equal(fairness.target, undefined);
    assert.equal(fairness.met, undefined);
    assert.match(fairness.note!, /died during this phase/);
    assert.match(line.figures['Ingestion: settled events accepted (worker idle)'].note!, /had died before this phase/);
    // A figure that counts carries no note at all.
    assert.equal(historyFigure(accepted).note, undefined);
    assert.equal(historyLine({ ...lineInput(), rows: [accepted] }).temporalDied, undefined);
  });

  it('shows such figures as not counted, keeps the target from a run that counted, and names the death', () => {
    const counted = run('2026-11-28T19:52:00.000Z', 'f597c74', { [accepted.figure]: historyFigure(accepted) });
    const dead = run(
      '2026-12-01T19:00:00.000Z',
      'd3ffa6a',
      {
        [accepted.figure]: historyFigure(
          afterTemporalDeath([accepted], { phase: 'issuerFairness', how: 'signal SIGSEGV', when: 'before' })[0],
        ),
      },
      { temporalDied: { phase: 'issuerFairness', how: 'signal SIGSEGV' } },
    );
    const section = resultsSection([counted, dead]);
    assert.match(
      section,
      /\| Ingestion: settled events accepted \(worker idle\) \| 22,829 events\/s \(not counted\) \| 22,829 events\/s \| >= 5,000 events\/s \| 1 of 1 \|/,
    );
    assert.match(
      section,
      /d3ffa6a, 2026-12-01 19:00Z: .*the Temporal dev server died in issuerFairness \(signal SIGSEGV\): that phase's figures and the later ones are not counted/,
    );
    // Sizing takes its ranges from figures that count only.
    const slower = { ...historyFigure(accepted), value: 100 };
    const sizing = sizingSection([
      counted,
      run('2026-12-01T19:00:00.000Z', 'd3ffa6a', { [accepted.figure]: { ...slower, note: 'died' } }),
    ]);
    assert.match(sizing, /\| 22,829 events\/s \| 22,829 events\/s \|/);
  });
});

function lineInput() {
  return {
    time: new Date('2026-12-01T19:00:00Z'),
    commit: { commit: 'abc', dirty: false },
    machine,
    load: {},
    logLevel: 'info',
    config: {},
    calibration: false,
    seconds: 60,
    phaseSeconds: {},
  };
}

function run(time: string, commit: string, figures: HistoryRun['figures'], more: Partial<HistoryRun> = {}): HistoryRun {
  return {
    schema: 1,
    time,
    commit,
    dirty: false,
    machine: {},
    load: { atStart: 0.5 },
    logLevel: 'info',
    figures,
    source: 'npm run bench -- --record',
    ...more,
  };
}
