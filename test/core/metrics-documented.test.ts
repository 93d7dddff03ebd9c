// Every metric the service registers is documented where operators look: a row of the tables in
// docs/operating/metrics.md, with its type and its labels. The names are read from the registry
// itself (core/metrics.ts and the process metrics it collects), cross-checked with the names
// written in core/metrics.ts, so a new metric without its row fails here. The Temporal SDK metrics
// the page lists must be ones the installed SDK defines, so an SDK upgrade that renames one is
// noticed.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { collectProcessMetrics, registry } from '../../core/metrics';

const ROOT = join(__dirname, '..', '..');
const METRICS_DOC = 'docs/operating/metrics.md';
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** Rows of the page's tables whose first cell is a backquoted metric name: name → cells. */
function documentedMetrics(): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const line of read(METRICS_DOC).split('\n')) {
    const name = /^\| `([a-zA-Z_:][a-zA-Z0-9_:]*)` \|/.exec(line)?.[1];
    if (name)
      rows.set(
        name,
        line
          .split('|')
          .slice(1, -1)
          .map((cell) => cell.trim()),
      );
  }
  return rows;
}

/** The metric names core/metrics.ts writes out. */
function declaredInSource(): string[] {
  return [...read('core/metrics.ts').matchAll(/'(rewards_[a-z0-9_]+)'/g)].map((m) => m[1]);
}

/** Our metrics as the registry holds them, process metrics included. */
function registered(): { name: string; type: string; labels: string[] }[] {
  collectProcessMetrics();
  return registry
    .getMetricsAsArray()
    .filter((metric) => metric.name.startsWith('rewards_'))
    .map((metric) => ({
      name: metric.name,
      type: String(metric.type),
      labels: [...((metric as unknown as { labelNames?: string[] }).labelNames ?? [])].sort(),
    }));
}

const backquoted = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]).sort();

describe('metrics are documented (docs/operating/metrics.md)', () => {
  it('finds the metrics core/metrics.ts declares in the registry', () => {
    const declared = declaredInSource();
    assert.ok(declared.length >= 10, `only ${declared.length} names found in core/metrics.ts: the pattern broke`);
    const names = new Set(registered().map((m) => m.name));
    assert.deepEqual(
      declared.filter((name) => !names.has(name)),
      [],
    );
    for (const known of ['rewards_http_requests_total', 'rewards_process_cpu_seconds_total'])
      assert.ok(names.has(known));
  });

  it('lists every registered metric in a table, with its type and labels', () => {
    const rows = documentedMetrics();
    const problems: string[] = [];
    for (const metric of registered()) {
      const cells = rows.get(metric.name);
      if (!cells) {
        problems.push(`${metric.name}: no row`);
        continue;
      }
      // | Metric | Type | Unit | Labels | ...
      if (cells[1] !== metric.type) problems.push(`${metric.name}: type ${cells[1]}, registered as ${metric.type}`);
      const labels = cells[3] === 'none' ? [] : backquoted(cells[3]);
      if (labels.join() !== metric.labels.join())
        problems.push(`${metric.name}: labels ${cells[3]}, registered with ${metric.labels.join(', ') || 'none'}`);
    }
    assert.deepEqual(problems, []);
  });

  it('lists none of ours that the code no longer declares', () => {
    const declared = new Set(declaredInSource());
    const processMetrics = new Set(registered().map((m) => m.name));
    const stale = [...documentedMetrics().keys()].filter(
      (name) => name.startsWith('rewards_') && !declared.has(name) && !processMetrics.has(name),
    );
    // The process metrics marked Linux are absent elsewhere; the rest must exist.
    const doc = read(METRICS_DOC);
    assert.deepEqual(
      stale.filter((name) => !new RegExp(`^\\| \`${name}\` \\|.*\\(Linux\\)`, 'm').test(doc)),
      [],
    );
  });

  it('lists only Temporal SDK metrics the installed SDK defines', () => {
    const core = join(ROOT, 'node_modules', '@temporalio', 'core-bridge', 'sdk-core', 'crates');
    const sources = [
      'sdk-core/src/telemetry/metrics.rs',
      'common/src/telemetry/metrics.rs',
      'client/src/metrics.rs',
    ].map((file) => join(core, file));
    const missing = sources.filter((file) => !existsSync(file));
    assert.deepEqual(missing, [], "the SDK's metric definitions moved: update this test's paths");
    const defined = new Set(
      sources.flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/"([a-z][a-z0-9_]*)"/g)].map((m) => m[1])),
    );
    const listed = [...documentedMetrics().keys()].filter((name) => name.startsWith('temporal_'));
    assert.ok(listed.length >= 10, `only ${listed.length} Temporal SDK metrics listed`);
    assert.deepEqual(
      listed.filter((name) => !defined.has(name.slice('temporal_'.length))),
      [],
    );
  });
});
