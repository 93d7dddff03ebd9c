// One table: each figure beside its target (DESIGN.md, "Quality bars"), and the JSON copy
// in bench/results/latest.json for comparing runs.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Machine } from './machine';

export interface Row {
  figure: string;
  value: number;
  unit: string;
  /** Undefined: reported for context, no target. */
  target?: { op: '>=' | '<='; value: number };
  /** The floor's value of the same quantity in the same run, for figures measured against one. */
  floor?: number;
  note?: string;
  /**
   * Why the figure does not count (it then has no target): the stack it was measured on had
   * lost its Temporal dev server (bench/temporal-death.ts). The history keeps it as the figure's note.
   */
  notCounted?: string;
}

export const met = (row: Row): boolean | undefined =>
  row.target === undefined
    ? undefined
    : row.target.op === '>='
      ? row.value >= row.target.value
      : row.value <= row.target.value;

const fmt = (v: number) =>
  Number.isNaN(v) ? 'n/a' : Math.abs(v) >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(1);

/** `services`: how the API and the worker ran (their log level, tracing). */
export function printReport(machine: Machine, processes: string, services: string, rows: Row[]): string {
  const lines = [
    `Machine: ${machine.cpuModel}, ${machine.cores} cores, ${machine.memoryGiB} GiB, Node ${machine.node}, ${machine.platform}, load avg (1m) at start ${machine.loadAverage1m}`,
    `Processes: ${processes}`,
    `Services: ${services}`,
    '',
  ];
  const table = rows.map((r) => [
    r.figure,
    `${fmt(r.value)} ${r.unit}`,
    r.target ? `${r.target.op} ${fmt(r.target.value)} ${r.unit}` : '',
    met(r) === undefined ? '' : met(r) ? 'met' : 'NOT MET',
    r.note ?? '',
  ]);
  const head = ['Figure', 'Value', 'Target', 'Result', 'Note'];
  const widths = head.map((h, i) => Math.max(h.length, ...table.map((t) => t[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]))
      .join(' | ')
      .trimEnd();
  lines.push(line(head), widths.map((w) => '-'.repeat(w)).join('-|-'), ...table.map(line));
  const text = lines.join('\n');
  console.log(`\n${text}\n`);
  return text;
}

export function writeResults(dir: string, results: unknown): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'latest.json');
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  return file;
}
