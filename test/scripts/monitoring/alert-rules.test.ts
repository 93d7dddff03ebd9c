// The alert rules and the dashboard of scripts/monitoring/ (docs/operating/runbook.md, "Alerts and
// dashboard"): promtool checks the rules and runs their unit tests on synthetic series, every
// alert has a firing and a quiet case there and a line in the runbook, and the rules and the
// dashboard query only metrics docs/operating/metrics.md lists. promtool is put in .tools/promtool
// by `npm test`'s bootstrap (scripts/bootstrap.js: Debian's, else built with `go install`), in a
// version it accepts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');
const MONITORING = join(ROOT, 'scripts', 'monitoring');
const RULES = 'alert-rules.yml';
const RULE_TESTS = 'alert-rules.test.yml';
const { PROMTOOL, PROMTOOL_PACKAGE, PROMTOOL_ACCEPTED, promtoolVersion, promtoolAccepted } =
  require('../../../scripts/bootstrap.js') as {
    PROMTOOL: string;
    PROMTOOL_PACKAGE: string;
    PROMTOOL_ACCEPTED: { text: string };
    promtoolVersion(binary: string): string | undefined;
    promtoolAccepted(version: string | undefined): boolean;
  };

const read = (path: string) => readFileSync(path, 'utf8');
const rulesText = () => read(join(MONITORING, RULES));

/** Runs promtool in scripts/monitoring; fails naming the cause when there is none, or not one that reads our files. */
function promtool(...args: string[]) {
  if (!existsSync(PROMTOOL)) {
    // Where the bootstrap looks for Go: GO, else `go` on PATH, else the official archive's place.
    const candidates = process.env.GO ? [process.env.GO] : ['go', '/usr/local/go/bin/go'];
    const go = candidates.map((cmd) => spawnSync(cmd, ['version'], { encoding: 'utf8' })).find((r) => !r.error);
    const cause = go
      ? `Go is there (${go.stdout.trim()}): the bootstrap's output shows why the build failed`
      : 'no go command was found: install Go (the Go module proxy provides the rest)';
    assert.fail(
      `promtool is missing at ${PROMTOOL}: npm test's bootstrap unpacks Debian's (\`apt-get download prometheus\`; ` +
        `as root it runs \`apt-get update\` first) or builds it with \`go install ${PROMTOOL_PACKAGE}\`: ${cause}; ` +
        'then run `node scripts/bootstrap.js test`.',
    );
  }
  const version = promtoolVersion(PROMTOOL);
  assert.ok(
    promtoolAccepted(version),
    `${PROMTOOL} is promtool ${version ?? 'of no version'}, not ${PROMTOOL_ACCEPTED.text}: delete it and run \`node scripts/bootstrap.js test\``,
  );
  const run = spawnSync(PROMTOOL, args, { cwd: MONITORING, encoding: 'utf8' });
  assert.equal(run.error, undefined, String(run.error));
  return run;
}

/** The `alert:` names of the rules. */
function alertNames(): string[] {
  return [...rulesText().matchAll(/^\s*- alert:\s*(\S+)\s*$/gm)].map((m) => m[1]);
}

/**
 * The cases of alert-rules.test.yml per alert: `alertname: X` followed directly by `exp_alerts: []`
 * (quiet) or by `exp_alerts:` and a list whose first item has exp_labels (firing).
 */
function ruleTestCases(): Map<string, { firing: number; quiet: number }> {
  const lines = read(join(MONITORING, RULE_TESTS))
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.trim().startsWith('#'));
  const cases = new Map<string, { firing: number; quiet: number }>();
  lines.forEach((line, i) => {
    const name = /^\s*(?:- )?alertname:\s*(\S+)\s*$/.exec(line)?.[1];
    if (!name) return;
    const count = cases.get(name) ?? { firing: 0, quiet: 0 };
    cases.set(name, count);
    const expected = lines[i + 1] ?? '';
    if (/^\s*exp_alerts:\s*\[\]\s*$/.test(expected)) count.quiet++;
    else if (/^\s*exp_alerts:\s*$/.test(expected) && /^\s*- exp_labels:\s*$/.test(lines[i + 2] ?? '')) count.firing++;
    else
      assert.fail(
        `${RULE_TESTS}: write \`exp_alerts: []\` or \`exp_alerts:\` with a list right after alertname ${name}`,
      );
  });
  return cases;
}

/** The PromQL of each rule: the indented block under `expr: |`. */
function ruleExpressions(): string[] {
  const lines = rulesText().split('\n');
  const exprs: string[] = [];
  lines.forEach((line, i) => {
    const m = /^(\s*)expr:\s*(.*)$/.exec(line);
    if (!m) return;
    if (m[2] !== '|') {
      exprs.push(m[2]);
      return;
    }
    const block: string[] = [];
    for (const next of lines.slice(i + 1)) {
      if (next.trim() !== '' && next.search(/\S/) <= m[1].length) break;
      block.push(next);
    }
    exprs.push(block.join('\n'));
  });
  return exprs;
}

interface Panel {
  title?: string;
  type?: string;
  datasource?: { uid?: string };
  targets?: { expr?: string }[];
  panels?: Panel[];
}

function dashboard(): { panels: Panel[]; templating: { list: { name: string; type: string }[] } } {
  return JSON.parse(read(join(MONITORING, 'dashboard.json'))) as ReturnType<typeof dashboard>;
}

const allPanels = (panels: Panel[]): Panel[] => panels.flatMap((p) => [p, ...allPanels(p.panels ?? [])]);

/** PromQL words that are not metric names (functions are recognised by their parenthesis). */
const PROMQL_WORDS = new Set([
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'by',
  'without',
  'on',
  'ignoring',
  'inf',
  'nan',
]);

/** The metric names a PromQL expression selects. */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$\{?\w+\}?/g, ' ');
  // A whole identifier (not a prefix of one, nor the tail of a number such as 1e3) not followed by "(".
  const names = [...bare.matchAll(/(?<![\w.:])([a-zA-Z_:][\w:]*)(?![\w:])(?!\s*\()/g)].map((m) => m[1]);
  return [...new Set(names.filter((name) => !PROMQL_WORDS.has(name.toLowerCase())))];
}

/** Names in the first column of docs/operating/metrics.md's tables. */
function documented(): Set<string> {
  const doc = read(join(ROOT, 'docs', 'operating', 'metrics.md'));
  return new Set([...doc.matchAll(/^\| `([a-zA-Z_:][a-zA-Z0-9_:]*)` \|/gm)].map((m) => m[1]));
}

/** A histogram's series are documented under its name. */
const isDocumented = (name: string, names: Set<string>) =>
  names.has(name) || names.has(name.replace(/_(bucket|count|sum)$/, ''));

describe('alert rules and dashboard (scripts/monitoring)', function () {
  this.timeout(120_000);

  it('promtool accepts the rules', () => {
    const run = promtool('check', 'rules', RULES);
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.match(run.stdout + run.stderr, /SUCCESS: \d+ rules found/);
  });

  it('the rules pass their unit tests on synthetic series', () => {
    const run = promtool('test', 'rules', RULE_TESTS);
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.match(run.stdout + run.stderr, /SUCCESS/);
  });

  it('tests every alert with a case where it fires and one where it stays quiet', () => {
    const alerts = alertNames();
    assert.ok(alerts.length >= 10, `only ${alerts.length} alerts found in ${RULES}: the pattern broke`);
    assert.equal(new Set(alerts).size, alerts.length, 'alert names are unique');
    const cases = ruleTestCases();
    const untested = alerts.filter((name) => !(cases.get(name)?.firing && cases.get(name)?.quiet));
    assert.deepEqual(untested, [], 'alerts without both a firing and a quiet case');
    assert.deepEqual(
      [...cases.keys()].filter((name) => !alerts.includes(name)),
      [],
      'cases of alerts that do not exist',
    );
  });

  it('explains every alert in the runbook and names it in the metrics page', () => {
    const runbook = read(join(ROOT, 'docs', 'operating', 'runbook.md'));
    const start = runbook.indexOf('\n## Alerts and dashboard');
    assert.ok(start >= 0, 'runbook.md has a section "Alerts and dashboard"');
    const end = runbook.indexOf('\n## ', start + 1);
    const section = runbook.slice(start, end < 0 ? undefined : end);
    const metricsPage = read(join(ROOT, 'docs', 'operating', 'metrics.md'));
    assert.deepEqual(
      alertNames().filter((name) => !section.includes(`\`${name}\``)),
      [],
      'alerts missing from the runbook',
    );
    assert.deepEqual(
      alertNames().filter((name) => !metricsPage.includes(name)),
      [],
      'alerts no metric names',
    );
  });

  it('reads the metric names of a query', () => {
    assert.deepEqual(
      metricNames(
        'histogram_quantile(0.99, sum by (le, route) (rate(a_bucket{route=~"/x|y"}[$__rate_interval]))) / ' +
          'sum(b offset 5m) > 0.5 and on (x) c or vector(0)',
      ),
      ['a_bucket', 'b', 'c'],
    );
  });

  it('has a dashboard whose queries use only documented metrics, through the datasource variable', () => {
    const model = dashboard();
    assert.ok(model.templating.list.some((v) => v.name === 'DS_PROMETHEUS' && v.type === 'datasource'));
    const panels = allPanels(model.panels).filter((p) => p.type !== 'row');
    assert.ok(panels.length >= 20, `only ${panels.length} panels`);
    const exprs = panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr ?? '' })));
    assert.deepEqual(
      panels.filter((p) => p.datasource?.uid !== '${DS_PROMETHEUS}').map((p) => p.title),
      [],
      'panels not on ${DS_PROMETHEUS}',
    );
    const names = documented();
    const undocumented = exprs.flatMap(({ panel, expr }) =>
      metricNames(expr)
        .filter((name) => !isDocumented(name, names))
        .map((name) => `${panel}: ${name}`),
    );
    assert.deepEqual(undocumented, []);
    for (const metric of [
      'rewards_webhook_attempts_total',
      'temporal_worker_task_slots_available',
      'temporal_sticky_cache_hit',
    ])
      assert.ok(
        exprs.some(({ expr }) => metricNames(expr).includes(metric)),
        `a panel shows ${metric}`,
      );
  });

  it('alerts only on documented metrics', () => {
    const exprs = ruleExpressions();
    assert.equal(exprs.length, alertNames().length);
    const names = documented();
    assert.deepEqual(
      exprs.flatMap((expr) => metricNames(expr)).filter((name) => !isDocumented(name, names)),
      [],
    );
  });
});
