// `npm run bench -- --record`: one JSON line per run appended to bench/history.ndjson, which is
// committed. Documents cite a run by its time and commit instead of copying figures into prose,
// and a reader can compare runs across changes without trusting anyone's summary.
import { execFileSync } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Machine } from './machine';
import { met, type Row } from './report';

export const HISTORY_FILE = join(__dirname, 'history.ndjson');

export interface HistoryFigure {
  /** Null where the run had no finite value (a p99 with webhooks missing is infinite). */
  value: number | null;
  unit: string;
  /** The same quantity for the floor measured in the same run, where the figure has one. */
  floor?: number;
  /** value / floor, in percent. */
  ratioPct?: number;
  target?: { op: '>=' | '<='; value: number };
  met?: boolean;
  /**
   * Why the figure does not count, and has no target: measured during or after the death of the
   * run's Temporal dev server (bench/temporal-death.ts). Absent from every figure that counts.
   */
  note?: string;
}

export interface HistoryLine {
  schema: 1;
  time: string;
  /** The commit measured; null where it is not known (transcribed runs). */
  commit: string | null;
  /** Uncommitted changes in the working tree when the run started. */
  dirty?: boolean;
  machine: Partial<Machine>;
  /** One-minute load average when each phase started: a busy machine explains a slow run. */
  load: Record<string, number>;
  /**
   * LOG_LEVEL of the API and the worker. Absent from the lines recorded before it was kept:
   * those ran at warn, the bench's level then (unless BENCH_LOG_LEVEL said otherwise, unrecorded).
   */
  logLevel?: string;
  config?: Record<string, unknown>;
  /**
   * A calibration run (BENCH_TRACING_CALIBRATION=1: the tracing phase with tracing off on both
   * sides). Its figures measure the procedure, not the code: the report keeps them apart.
   */
  calibration?: true;
  /** How long the whole run took, and each phase (absent from lines recorded before they were kept). */
  seconds?: number;
  phaseSeconds?: Record<string, number>;
  /** The phase in which the run's Temporal dev server died, and how; its figures and later ones have notes. */
  temporalDied?: { phase: string; how: string };
  figures: Record<string, HistoryFigure>;
  source: 'npm run bench -- --record' | 'transcribed from README';
  note?: string;
}

const finite = (v: number): number | null => (Number.isFinite(v) ? Math.round(v * 1000) / 1000 : null);

/** One row of the printed table as history keeps it. */
export function historyFigure(row: Row): HistoryFigure {
  const figure: HistoryFigure = { value: finite(row.value), unit: row.unit };
  if (row.floor !== undefined) {
    figure.floor = finite(row.floor) ?? undefined;
    if (row.floor > 0) figure.ratioPct = finite((row.value / row.floor) * 100) ?? undefined;
  }
  if (row.target) {
    figure.target = row.target;
    figure.met = met(row);
  }
  if (row.notCounted) figure.note = row.notCounted;
  return figure;
}

export function historyLine(input: {
  time: Date;
  commit: { commit: string | null; dirty: boolean };
  machine: Machine;
  load: Record<string, number>;
  logLevel: string;
  config: object;
  calibration: boolean;
  seconds: number;
  phaseSeconds: Record<string, number>;
  temporalDied?: { phase: string; how: string };
  rows: Row[];
}): HistoryLine {
  return {
    schema: 1,
    time: input.time.toISOString(),
    commit: input.commit.commit,
    dirty: input.commit.dirty,
    machine: input.machine,
    load: { atStart: input.machine.loadAverage1m, ...input.load },
    logLevel: input.logLevel,
    config: { ...input.config },
    ...(input.calibration ? { calibration: true as const } : {}),
    seconds: Math.round(input.seconds),
    phaseSeconds: { ...input.phaseSeconds },
    ...(input.temporalDied ? { temporalDied: { ...input.temporalDied } } : {}),
    figures: Object.fromEntries(input.rows.map((row) => [row.figure, historyFigure(row)])),
    source: 'npm run bench -- --record',
  };
}

/** HEAD and whether the tree has changes; null outside a git checkout. */
export function currentCommit(cwd = join(__dirname, '..')): { commit: string | null; dirty: boolean } {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
    return { commit: git('rev-parse', 'HEAD'), dirty: git('status', '--porcelain') !== '' };
  } catch {
    return { commit: null, dirty: false };
  }
}

export function appendHistory(line: HistoryLine, file = HISTORY_FILE): string {
  appendFileSync(file, `${JSON.stringify(line)}\n`);
  return file;
}

/** Phases that can run alone (`--only <phase>`), on a fresh stack without the others. */
export const SOLO_PHASES = [
  'fairness',
  'tracing',
  'ingestion',
  'reads',
  'overload',
  'issuer-fairness',
  'payouts',
  'budgets',
  'statements',
  'targeting',
  'audit',
] as const;
export type SoloPhase = (typeof SOLO_PHASES)[number];

export interface BenchArgs {
  record: boolean;
  /**
   * Only this phase runs; a partial run is never recorded (its figures would stand beside whole
   * runs' without the phases before it). A calibration is recorded as a whole run with its flag.
   */
  only?: SoloPhase;
}

/** `--record`, or `--only <phase>` (also `--only=<phase>`). */
export function parseBenchArgs(argv: readonly string[]): BenchArgs {
  const args: BenchArgs = { record: false };
  const usage = `(--record, or --only ${SOLO_PHASES.join('|')})`;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--record') args.record = true;
    else if (arg === '--only' || arg.startsWith('--only=')) {
      const phase = arg === '--only' ? argv[++i] : arg.slice('--only='.length);
      if (!SOLO_PHASES.includes(phase as SoloPhase))
        throw new Error(`npm run bench: --only takes ${SOLO_PHASES.join(', ')} (got ${phase ?? 'nothing'})`);
      args.only = phase as SoloPhase;
    } else throw new Error(`npm run bench: unknown argument ${arg} ${usage}`);
  }
  if (args.record && args.only) throw new Error('npm run bench: --record keeps whole runs only; drop --only to record');
  return args;
}
