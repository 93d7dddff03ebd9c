// The sections `npm run bench:report` writes into the documents, made from a history of a few
// invented runs: the latest whole runs side by side, calibrations apart, the sizing ranges, and
// the markers a section is written between.
import assert from 'node:assert/strict';
import {
  calibrationSection,
  durationSection,
  figureKey,
  parseHistory,
  renderDocuments,
  replaceSection,
  resultsSection,
  sizingSection,
  type HistoryRun,
} from '../../bench/history-report';
import { citationProblems, citationsIn, showsValue } from '../../bench/history-citations';

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

const ratio = (value: number, met: boolean) => ({ value, unit: '%', target: { op: '>=' as const, value: 75 }, met });

const HISTORY: HistoryRun[] = [
  {
    ...run('2026-11-20T10:00:00Z', '', { 'Sustained: lifecycle / floor': ratio(91, true) }),
    commit: null,
    source: 'transcribed from README',
    label: 'lean pipeline: after',
    recordedIn: 'f'.repeat(40),
  },
  run('2026-11-25T10:00:00.000Z', 'aaaaaaa1111', {
    'Sustained: lifecycle / floor': ratio(80, true),
    'End to end at 27/s (half sustained): p99': { value: 232.078, unit: 'ms' },
  }),
  run('2026-11-26T10:00:00.000Z', 'bbbbbbb2222', {
    'Sustained: lifecycle / floor': ratio(70.04, false),
    'End to end at 19/s (half sustained): p99': { value: 126, unit: 'ms' },
  }),
  run(
    '2026-11-27T10:00:00.000Z',
    'ccccccc3333',
    {
      'Sustained: lifecycle / floor': ratio(50, false),
      'Tracing: traced / untraced lifecycle': { value: 98.6, unit: '%' },
    },
    { calibration: true, config: { tracingCalibration: true } },
  ),
];

describe('bench/history-report', () => {
  it('shows the latest whole runs newest first, without transcribed or calibration runs', () => {
    const section = resultsSection(HISTORY, { latest: 2, window: 10 });
    assert.match(
      section,
      /\| Figure \| bbbbbbb, 2026-11-26 10:00Z \| aaaaaaa, 2026-11-25 10:00Z \| Target \| Met, last 2 \|/,
    );
    assert.match(section, /\| Sustained: lifecycle \/ floor \| 70\.0 % ✗ \| 80 % \| >= 75 % \| 1 of 2 \|/);
    assert.doesNotMatch(section, /ccccccc|91 %/);
  });

  it('compares the half-rate latency across runs whose rates differ, and shows each rate', () => {
    assert.equal(figureKey('End to end at 27/s (half sustained): p99'), 'End to end at half the sustained rate: p99');
    assert.match(
      resultsSection(HISTORY),
      /\| End to end at half the sustained rate: p99 \| 126 ms at 19\/s \| 232 ms at 27\/s \|/,
    );
  });

  it('shows calibration runs apart, and says so when there is none', () => {
    assert.match(calibrationSection(HISTORY), /\| ccccccc, 2026-11-27 10:00Z \| 98\.6 % \|/);
    assert.match(calibrationSection(HISTORY.slice(0, 3)), /No calibration run is recorded yet/);
  });

  it('gives the sizing figures their lowest and highest over the latest runs', () => {
    assert.match(sizingSection(HISTORY), /\| Sustained: lifecycle \/ floor \| .* \| 70\.0 % \| 80 % \| >= 75 % \|/);
    assert.match(sizingSection(HISTORY, 1), /\| 70\.0 % \| 70\.0 % \|/);
  });

  it('gives the duration of the latest run that kept it', () => {
    assert.match(durationSection(HISTORY), /No recorded run has kept its duration yet/);
    const timed = [
      ...HISTORY,
      run('2026-11-28T10:00:00Z', 'ddddddd', {}, { seconds: 2700, phaseSeconds: { floor: 95 } }),
    ];
    assert.equal(
      durationSection(timed),
      'The latest recorded run that kept its duration, ddddddd, 2026-11-28 10:00Z, took 45 min: floor 2 min.\n',
    );
  });

  it('writes a section between its markers, and refuses a document without them', () => {
    const marked = (content: string) =>
      `intro\n<!-- bench:report results: written by npm run bench:report from bench/history.ndjson; do not edit -->\n${content}<!-- /bench:report results -->\nafter\n`;
    assert.equal(replaceSection(marked('old\n'), 'results', 'new\n'), marked('new\n'));
    assert.throws(() => replaceSection('no markers\n', 'results', 'new\n'), /no "<!-- bench:report results/);
    const documents = renderDocuments(HISTORY, () => marked('old\n'), [
      { file: 'a.md', section: 'results', render: () => 'rendered\n' },
    ]);
    assert.equal(documents.get('a.md'), marked('rendered\n'));
  });

  it('names the line of a history that does not parse', () => {
    assert.throws(() => parseHistory('{"schema":1}\n\n{oops\n'), /line 3/);
  });
});

describe('bench/history-citations', () => {
  it('finds run and figure citations, a wrapped one included', () => {
    const text =
      'See [run aaaaaaa, 2026-11-25\n10:00Z](../bench/history.ndjson), and [80 %](../../bench/history.ndjson "run aaaaaaa, 2026-11-25 10:00Z: Sustained: lifecycle / floor").';
    assert.deepEqual(
      citationsIn(text).map((c) => [c.run, c.figure?.name, c.figure?.shown]),
      [
        ['aaaaaaa, 2026-11-25 10:00Z', undefined, undefined],
        ['aaaaaaa, 2026-11-25 10:00Z', 'Sustained: lifecycle / floor', '80 %'],
      ],
    );
  });

  it('accepts runs and figures the history holds, transcribed ones by time or label', () => {
    const text = [
      '[run bbbbbbb, 2026-11-26 10:00Z](history.ndjson)',
      '[run of 2026-11-20 10:00Z, transcribed](bench/history.ndjson)',
      '[runs "lean pipeline: after", transcribed](bench/history.ndjson)',
      '[70.0 %](bench/history.ndjson "run bbbbbbb, 2026-11-26 10:00Z: Sustained: lifecycle / floor")',
      '[70 %](bench/history.ndjson "run bbbbbbb, 2026-11-26 10:00Z: Sustained: lifecycle / floor")',
      '[232 ms](bench/history.ndjson "run aaaaaaa, 2026-11-25 10:00Z: End to end at half the sustained rate: p99")',
      `[91 %](bench/history.ndjson 'runs "lean pipeline: after", transcribed: Sustained: lifecycle / floor')`,
    ].join('\n');
    assert.deepEqual(citationProblems(text, HISTORY), []);
  });

  it('fails a run the history does not hold, and a figure edited after it was cited', () => {
    assert.deepEqual(citationProblems('[run bbbbbbb, 2026-11-26 10:01Z](bench/history.ndjson)', HISTORY), [
      '[run bbbbbbb, 2026-11-26 10:01Z](bench/history.ndjson): no run "bbbbbbb, 2026-11-26 10:01Z" in bench/history.ndjson',
    ]);
    const cited = '[80 %](bench/history.ndjson "run aaaaaaa, 2026-11-25 10:00Z: Sustained: lifecycle / floor")';
    assert.deepEqual(citationProblems(cited, HISTORY), []);
    assert.match(citationProblems(cited.replace('[80 %]', '[85 %]'), HISTORY)[0], /"85 %" is not what run .* recorded/);
    assert.match(
      citationProblems(cited.replace('lifecycle / floor', 'lifecycle'), HISTORY)[0],
      /has no figure "Sustained: lifecycle"/,
    );
  });

  it('compares a shown value to the decimals it shows, in the recorded unit', () => {
    const figure = { value: 2930.4, unit: 'req/s' };
    assert.ok(showsValue('2,930 req/s', figure));
    assert.ok(showsValue('2930.4', figure));
    assert.ok(!showsValue('2,931 req/s', figure));
    assert.ok(!showsValue('2,930 events/s', figure));
    assert.ok(!showsValue('2,930 req/s', { value: null, unit: 'req/s' }));
  });
});
