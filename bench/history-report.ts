// The figures the documents show, generated from bench/history.ndjson rather than retold by hand:
// a figure copied into prose drifts as soon as the next run is recorded. `npm run bench:report`
// (bench/report-docs.ts) writes each section below between its markers in its document, and
// test/docs/bench-report.test.ts fails when a committed section differs from what these
// functions make of the committed history.
//   - `results` in docs/benchmarks.md: the latest whole runs, figure by figure, and how often
//     each target was met;
//   - `calibrations` in docs/benchmarks.md: the calibration runs, apart from the others;
//   - `duration` in docs/benchmarks.md: how long the latest run that kept it took, phase by phase;
//   - `sizing` in docs/operating/deploy.md: the range of the figures an operator sizes with.
import type { HistoryFigure, HistoryLine } from './record';

/** A line of the history; transcribed runs also carry the label and commit of the README that told them. */
export type HistoryRun = HistoryLine & { label?: string; recordedIn?: string };

export function parseHistory(text: string): HistoryRun[] {
  return text
    .split('\n')
    .map((line, i) => ({ line, number: i + 1 }))
    .filter(({ line }) => line.trim() !== '')
    .map(({ line, number }) => {
      try {
        return JSON.parse(line) as HistoryRun;
      } catch (error) {
        throw new Error(`bench/history.ndjson, line ${number}: ${(error as Error).message}`);
      }
    });
}

export const isRecorded = (run: HistoryRun): boolean => run.source === 'npm run bench -- --record';

/** A calibration measures the procedure (tracing off on both sides), not the code. */
export const isCalibration = (run: HistoryRun): boolean =>
  run.calibration === true || run.config?.tracingCalibration === true;

/** Whole runs recorded by the bench, calibrations excluded, oldest first. */
export const measuredRuns = (history: HistoryRun[]): HistoryRun[] =>
  history.filter((run) => isRecorded(run) && !isCalibration(run));

/** `2026-11-27 16:35Z`: the minute a run started, as documents cite it. */
export const runMinute = (time: string): string => `${time.slice(0, 10)} ${time.slice(11, 16)}Z`;

/** `61963a6, 2026-11-27 16:35Z`: how documents name a recorded run (bench/history-citations.ts). */
export const runName = (run: HistoryRun): string =>
  `${(run.commit ?? 'no commit').slice(0, 7)}, ${runMinute(run.time)}`;

// The half-rate end-to-end figure names the rate it ran at, which differs from run to run.
const HALF_RATE = /^End to end at (\d+(?:\.\d+)?)\/s \(half sustained\): p99$/;
const HALF_RATE_KEY = 'End to end at half the sustained rate: p99';

/** The name a figure is compared under across runs. */
export const figureKey = (name: string): string => (HALF_RATE.test(name) ? HALF_RATE_KEY : name);

/** The figures of a run by key, each with what its name carried beyond the key. */
function figuresByKey(run: HistoryRun): Map<string, { figure: HistoryFigure; detail?: string }> {
  return new Map(
    Object.entries(run.figures).map(([name, figure]) => {
      const rate = HALF_RATE.exec(name)?.[1];
      return [figureKey(name), { figure, detail: rate === undefined ? undefined : `at ${rate}/s` }];
    }),
  );
}

/** Whole numbers as they are, others to one decimal below 100 and to units above (as the bench prints). */
export function formatNumber(value: number): string {
  if (Number.isInteger(value) || Math.abs(value) >= 100) return Math.round(value).toLocaleString('en-US');
  return value.toFixed(1);
}

const withUnit = (value: number, unit: string): string => `${formatNumber(value)} ${unit}`;

function formatFigure(figure: HistoryFigure, detail?: string): string {
  const value = figure.value === null ? 'not finite' : withUnit(figure.value, figure.unit);
  const uncounted = figure.note ? ' (not counted)' : '';
  return `${value}${detail ? ` ${detail}` : ''}${figure.met === false ? ' ✗' : ''}${uncounted}`;
}

const formatTarget = (figure: HistoryFigure): string =>
  figure.target ? `${figure.target.op} ${withUnit(figure.target.value, figure.unit)}` : '';

/** Every figure key of the runs, in the order the newest run printed them, older ones' after. */
function figureOrder(runs: HistoryRun[]): string[] {
  const keys: string[] = [];
  for (const run of [...runs].reverse())
    for (const key of figuresByKey(run).keys()) if (!keys.includes(key)) keys.push(key);
  return keys;
}

const table = (head: string[], rows: string[][]): string =>
  [head, head.map(() => '---'), ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');

const minutes = (seconds: number): string => `${Math.round(seconds / 60)} min`;

function runContext(run: HistoryRun): string {
  const parts = [`LOG_LEVEL=${run.logLevel ?? 'warn'}`, `load average at start ${run.load.atStart ?? '?'}`];
  if (run.seconds !== undefined) parts.push(`took ${minutes(run.seconds)}`);
  if (run.dirty) parts.push('uncommitted changes');
  if (run.temporalDied)
    parts.push(
      `the Temporal dev server died in ${run.temporalDied.phase} (${run.temporalDied.how}): that phase's figures and the later ones are not counted`,
    );
  return `${runName(run)}: ${parts.join(', ')}`;
}

export interface ResultsOptions {
  /** Runs shown side by side, newest first. */
  latest: number;
  /** Runs over which "met" is counted. */
  window: number;
}

/** docs/benchmarks.md, "Latest results": the latest whole runs, figure by figure. */
export function resultsSection(history: HistoryRun[], options: ResultsOptions = { latest: 3, window: 10 }): string {
  const runs = measuredRuns(history);
  if (runs.length === 0) return 'No run is recorded yet.\n';
  const shown = runs.slice(-options.latest).reverse();
  const counted = runs.slice(-options.window);
  const rows = figureOrder(shown).map((key) => {
    const cells = shown.map((run) => {
      const found = figuresByKey(run).get(key);
      return found ? formatFigure(found.figure, found.detail) : '';
    });
    const figures = shown.map((run) => figuresByKey(run).get(key)?.figure).filter((f) => f !== undefined);
    // The target of the newest figure that counts: one measured after a dev server died has none.
    const newest = figures.find((f) => f.note === undefined) ?? figures[0];
    const judged = counted
      .map((run) => figuresByKey(run).get(key)?.figure)
      .filter((f): f is HistoryFigure => f?.met !== undefined);
    const met = newest.target ? `${judged.filter((f) => f.met).length} of ${judged.length}` : '';
    return [key, ...cells, formatTarget(newest), met];
  });
  return [
    `The ${shown.length} latest of the ${runs.length} whole runs recorded by \`npm run bench -- --record\`, newest`,
    `first (calibration runs are apart, below). ✗: the target was not met in that run. "Met" counts the`,
    `last ${counted.length} runs that measured the figure.`,
    '',
    table(['Figure', ...shown.map(runName), 'Target', `Met, last ${counted.length}`], rows),
    '',
    ...shown.map((run) => `- ${runContext(run)}`),
    '',
  ].join('\n');
}

const CALIBRATION_FIGURES = [
  'Tracing: traced / untraced lifecycle',
  'Tracing: service CPU per purchase, traced / untraced',
  'Tracing: machine CPU per purchase, traced / untraced',
];

/** docs/benchmarks.md, "Calibration runs": what the tracing procedure makes of no difference at all. */
export function calibrationSection(history: HistoryRun[]): string {
  const runs = history.filter((run) => isRecorded(run) && isCalibration(run)).reverse();
  if (runs.length === 0)
    return [
      'No calibration run is recorded yet: `BENCH_TRACING_CALIBRATION=1 npm run bench -- --record` records',
      'one, marked `"calibration": true`, and it shows here, never among the results above.',
      '',
    ].join('\n');
  const rows = runs.map((run) => [
    runName(run),
    ...CALIBRATION_FIGURES.map((key) => {
      const found = figuresByKey(run).get(key);
      return found ? formatFigure({ ...found.figure, met: undefined }) : '';
    }),
  ]);
  return [
    'Calibration runs, newest first: the tracing phase with tracing off on its traced side, so each',
    'figure is what the procedure and the machine make of two equal sides (100 % is no bias).',
    '',
    table(['Run', ...CALIBRATION_FIGURES], rows),
    '',
  ].join('\n');
}

/** docs/benchmarks.md, how long a run takes: the latest whole run that kept its duration. */
export function durationSection(history: HistoryRun[]): string {
  const run = measuredRuns(history)
    .filter((r) => r.seconds !== undefined)
    .at(-1);
  if (!run)
    return [
      'No recorded run has kept its duration yet: the lines recorded from now on carry `seconds` and',
      '`phaseSeconds`, and the latest of them shows here.',
      '',
    ].join('\n');
  const phases = Object.entries(run.phaseSeconds ?? {})
    .map(([phase, seconds]) => `${phase} ${minutes(seconds)}`)
    .join(', ');
  return `The latest recorded run that kept its duration, ${runName(run)}, took ${minutes(run.seconds!)}${phases ? `: ${phases}` : ''}.\n`;
}

/** The figures an operator sizes a deployment with, as docs/operating/deploy.md names them. */
const SIZING_FIGURES: { key: string; what: string }[] = [
  {
    key: 'Sustained: lifecycle (steady 10-90%)',
    what: 'settled purchases through one worker (event → ledger → webhook)',
  },
  { key: 'Sustained: lifecycle / floor', what: 'the same, as a share of empty workflows on the same Temporal server' },
  { key: 'End to end at 10/s: p99', what: 'a settled event to its webhook at 10 purchases a second' },
  { key: 'Cost: actions per settled purchase', what: 'Temporal billable actions' },
  { key: 'Cost: actions per auth-then-settled', what: 'Temporal billable actions' },
  { key: 'Reads: reward-detail', what: 'requests at 32 connections' },
  { key: 'Reads: reward-detail p99', what: '' },
  { key: 'Reads: summary', what: 'requests at 32 connections' },
  { key: 'Reads: summary p99', what: '' },
  { key: 'Ingestion: settled events accepted (worker idle)', what: '8 clients, batches of 100' },
  { key: 'Ingestion: batch latency p99', what: '' },
];

/** docs/operating/deploy.md, "Sizing": each figure's lowest and highest over the latest whole runs. */
export function sizingSection(history: HistoryRun[], window = 10): string {
  const runs = measuredRuns(history).slice(-window);
  if (runs.length === 0) return 'No run is recorded yet.\n';
  const rows = SIZING_FIGURES.flatMap(({ key, what }) => {
    const figures = runs
      .map((run) => figuresByKey(run).get(key)?.figure)
      // A figure measured on a stack whose dev server had died says nothing about sizing.
      .filter((f): f is HistoryFigure => f !== undefined && f.value !== null && f.note === undefined);
    if (figures.length === 0) return [];
    const values = figures.map((f) => f.value!);
    const unit = figures[0].unit;
    return [
      [key, what, withUnit(Math.min(...values), unit), withUnit(Math.max(...values), unit), formatTarget(figures[0])],
    ];
  });
  return [
    `The ${runs.length} latest whole runs recorded by \`npm run bench -- --record\`, from ${runName(runs[0])}`,
    `to ${runName(runs.at(-1)!)}: each figure's lowest and highest.`,
    '',
    table(['Figure (bench/history.ndjson)', 'What', 'Lowest', 'Highest', 'Target'], rows),
    '',
  ].join('\n');
}

/** A section of a document that `npm run bench:report` writes. */
export interface GeneratedSection {
  file: string;
  section: string;
  render: (history: HistoryRun[]) => string;
}

export const GENERATED_SECTIONS: GeneratedSection[] = [
  { file: 'docs/benchmarks.md', section: 'results', render: (history) => resultsSection(history) },
  { file: 'docs/benchmarks.md', section: 'calibrations', render: calibrationSection },
  { file: 'docs/benchmarks.md', section: 'duration', render: durationSection },
  { file: 'docs/operating/deploy.md', section: 'sizing', render: (history) => sizingSection(history) },
];

const START = (section: string) =>
  `<!-- bench:report ${section}: written by npm run bench:report from bench/history.ndjson; do not edit -->\n`;
const END = (section: string) => `<!-- /bench:report ${section} -->`;

/** `text` with the section between its markers replaced by `content`; the markers must be there. */
export function replaceSection(text: string, section: string, content: string): string {
  const start = text.indexOf(START(section));
  const end = text.indexOf(END(section));
  if (start < 0 || end < start)
    throw new Error(
      `no "${START(section).trim()}" ... "${END(section)}" markers to write the ${section} section between`,
    );
  return text.slice(0, start + START(section).length) + content + text.slice(end);
}

/** Every document with generated sections, as `npm run bench:report` would write it. */
export function renderDocuments(
  history: HistoryRun[],
  read: (file: string) => string,
  sections: GeneratedSection[] = GENERATED_SECTIONS,
): Map<string, string> {
  const documents = new Map<string, string>();
  for (const { file, section, render } of sections)
    documents.set(file, replaceSection(documents.get(file) ?? read(file), section, render(history)));
  return documents;
}
