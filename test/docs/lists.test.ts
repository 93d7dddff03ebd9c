// Lists a reader of the docs relies on, checked against the code that defines them, so that a new
// id prefix, webhook type, reward event type or transfer kind cannot be added without the
// document that lists it naming it (and a removed one cannot linger there).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ID_PREFIXES } from '../../core/ids';
import { WEBHOOK_TYPES } from '../../core/webhooks/payloads';
import { REWARD_EVENT_TYPES, TRANSFER_KINDS } from '../../core/ledger';
import { ERROR_CLASSES, type ErrorName } from '../../core/errors';
import { EVENT_FAILURE_REASONS } from '../../api/ingestion/schemas';
import { AUTOMATIC_REJECTIONS, OPERATOR_REJECTIONS, REVIEW_REASONS } from '../../core/rules/claims';

const ROOT = join(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const GUIDE = read('docs/integration-guide.md');

/** The text of a section: from its heading to the next heading of the same or a higher level. */
function section(markdown: string, heading: string): string {
  const lines = markdown.split('\n');
  // A `#` line inside a fenced code block is a shell comment, not a heading.
  let fenced = false;
  const headings = lines.map((l) => {
    if (l.startsWith('```')) fenced = !fenced;
    return !fenced && /^#+ /.test(l) ? l.indexOf(' ') : 0;
  });
  const start = lines.findIndex((l, i) => headings[i] > 0 && l.replace(/^#+ /, '') === heading);
  assert.ok(start >= 0, `no heading "${heading}"`);
  const end = headings.findIndex((level, i) => i > start && level > 0 && level <= headings[start]);
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

/** The `code` spans of a text, its fenced code blocks left out. */
const codeSpans = (text: string) =>
  new Set([...text.replace(/^\s*```[\s\S]*?^\s*```/gm, '').matchAll(/`([^`\n]+)`/g)].map((m) => m[1]));

/** Prefixes of records only the operator sees: issuers, their tokens, the audit log, merchant statements, operators. */
const OPERATOR_ONLY = new Set(['iss', 'tok', 'aud', 'stm', 'stmrun', 'stmpay', 'op', 'optok', 'apr']);

describe('lists in the integration guide', () => {
  it('names every id prefix an issuer meets in Conventions, and no other', () => {
    const named = [...codeSpans(section(GUIDE, 'Conventions'))]
      .filter((c) => /^[a-z]+_$/.test(c))
      .map((c) => c.slice(0, -1));
    const expected = ID_PREFIXES.filter((p) => !OPERATOR_ONLY.has(p));
    assert.deepEqual([...named].sort(), [...expected].sort());
  });

  it('names every webhook type in Webhooks', () => {
    const spans = codeSpans(section(GUIDE, 'Webhooks'));
    assert.deepEqual(
      WEBHOOK_TYPES.filter((t) => !spans.has(t)),
      [],
    );
  });

  it('names every reward event type the activity feed shows in "Per group"', () => {
    const spans = codeSpans(section(GUIDE, 'Per group'));
    assert.deepEqual(
      REWARD_EVENT_TYPES.filter((t) => !spans.has(t)),
      [],
    );
  });

  it('names every per-event failure reason of ingestion in "Sending transactions"', () => {
    const spans = codeSpans(section(GUIDE, 'Sending transactions'));
    assert.deepEqual(
      Object.keys(EVENT_FAILURE_REASONS).filter((reason) => !spans.has(reason)),
      [],
    );
  });

  it('names every reason the service rejects a claim for, or sends it to review, in "Claims"', () => {
    const spans = codeSpans(section(GUIDE, 'Claims'));
    assert.deepEqual(
      [...AUTOMATIC_REJECTIONS, ...REVIEW_REASONS].filter((reason) => !spans.has(reason)),
      [],
    );
  });

  it('gives every error class its status in "Errors", and no status to a class that has another', () => {
    assert.deepEqual(errorTableProblems(section(GUIDE, 'Errors')), []);
  });

  it('finds an error class missing from the table, or under another status', () => {
    const table = section(GUIDE, 'Errors');
    assert.deepEqual(
      errorTableProblems(table.replace(/^\| 405 \|.*\n/m, '').replace('| 408 |', '| 409 |')),
      [
        'request_timeout: no row with status 408',
        'method_not_allowed: no row with status 405',
        '409: no class of that status in its row',
      ].sort(),
    );
  });

  it('finds a list that lacks one (the check above can fail)', () => {
    const spans = codeSpans('`a`, `b`');
    assert.deepEqual(
      ['a', 'b', 'c'].filter((t) => !spans.has(t)),
      ['c'],
    );
  });
});

/**
 * What is wrong with a table whose rows are `| 400 | \`validation_failed\`: reasons... | ... |`: an
 * error class with no row of its status, or a row's status that none of the classes it names has.
 */
function errorTableProblems(table: string): string[] {
  const rows = [...table.matchAll(/^\| ([\d, ]+) \| ([^|]+) \|/gm)].map((m) => ({
    statuses: m[1].split(',').map((status) => Number(status.trim())),
    classes: [...m[2].matchAll(/`([^`]+)`/g)].map((c) => c[1]).filter((name) => name in ERROR_CLASSES) as ErrorName[],
  }));
  const missing = (Object.keys(ERROR_CLASSES) as ErrorName[])
    .filter(
      (name) => !rows.some((row) => row.classes.includes(name) && row.statuses.includes(ERROR_CLASSES[name].status)),
    )
    .map((name) => `${name}: no row with status ${ERROR_CLASSES[name].status}`);
  const stray = rows.flatMap((row) =>
    row.statuses
      .filter((status) => !row.classes.some((name) => ERROR_CLASSES[name].status === status))
      .map((status) => `${status}: no class of that status in its row`),
  );
  return [...missing, ...stray].sort();
}

/** The first cell of each row of the Markdown tables in a text, when it is one `code` span. */
const firstCells = (text: string) => [...text.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]);

const NUMBERS: Record<string, number> = { one: 1, two: 2, three: 3, four: 4, five: 5, six: 6 };

/** For each release section of upgrading.md: the migrations it names, and how many it says it has. */
function releaseMigrations(upgrading: string): { title: string; named: string[]; said?: number }[] {
  return section(upgrading, 'Rolling out a release')
    .split(/^### /m)
    .slice(1)
    .map((text) => {
      const said = /^(\w+) migrations\b/im.exec(text)?.[1].toLowerCase();
      return {
        title: text.split('\n')[0],
        named: [...new Set([...text.matchAll(/`(\d{14}_\w+)`/g)].map((m) => m[1]))],
        said: said === undefined ? undefined : NUMBERS[said],
      };
    });
}

/** The phases `npm run bench` runs, in order: the names bench/run.ts times them by. */
function benchPhases(): string[] {
  const source = read('bench/run.ts');
  const body = source.slice(source.indexOf('async function runPhases('));
  return [...body.slice(0, body.indexOf('\n}\n')).matchAll(/timed\('(\w+)'/g)].map((m) => m[1]);
}

/**
 * The numbered phases of a text (`3. **sustained**: ...`), each as its number, the phase name its
 * bold words make (`**issuer fairness**` → issuerFairness), and whether it starts its own line.
 */
export function numberedPhases(text: string): { n: number; name: string; ownLine: boolean }[] {
  return [...text.matchAll(/(\d+)\. \*\*([^*]+)\*\*/g)].map((m) => ({
    n: Number(m[1]),
    name: m[2]
      .replace(/[^a-z ]/gi, '')
      .split(/ +/)
      .map((word, i) => (i === 0 ? word.toLowerCase() : word[0].toUpperCase() + word.slice(1).toLowerCase()))
      .join(''),
    ownLine: /(^|\n)[ \t]*$/.test(text.slice(0, m.index)),
  }));
}

/** What is wrong with a numbered list of phases against the phases run, in order. */
function phaseListProblems(text: string, phases: string[]): string[] {
  const listed = numberedPhases(text);
  return [
    ...listed.filter((item) => !item.ownLine).map((item) => `${item.n}. ${item.name}: not at the start of a line`),
    ...listed.flatMap((item, i) =>
      item.n === i + 1 ? [] : [`${item.n}. ${item.name}: numbered ${item.n}, is ${i + 1}`],
    ),
    ...(listed.map((item) => item.name).join() === phases.join()
      ? []
      : [`listed ${listed.map((item) => item.name).join(', ')}; bench/run.ts runs ${phases.join(', ')}`]),
  ];
}

describe('lists in docs/benchmarks.md', () => {
  it('lists in "How to run" the phases bench/run.ts runs, in its order, numbered in turn', () => {
    const phases = benchPhases();
    assert.ok(phases.length >= 10, `only ${phases.length} phases found in bench/run.ts`);
    assert.deepEqual(phaseListProblems(section(read('docs/benchmarks.md'), 'How to run'), phases), []);
  });

  it('finds a phase out of its line, numbered twice, or listed twice', () => {
    const text = '1. **floor**: one;\n2. **end to end** x; 2. **sustained**: y;\n3. **sustained**: z';
    assert.deepEqual(phaseListProblems(text, ['floor', 'endToEnd', 'sustained']), [
      '2. sustained: not at the start of a line',
      '2. sustained: numbered 2, is 3',
      '3. sustained: numbered 3, is 4',
      'listed floor, endToEnd, sustained, sustained; bench/run.ts runs floor, endToEnd, sustained',
    ]);
  });
});

describe('lists in the operating docs', () => {
  it('names every reason an operator may reject a claim for in docs/operating/runbook.md, "Claims waiting for review"', () => {
    const text = section(read('docs/operating/runbook.md'), 'Claims waiting for review');
    assert.deepEqual(
      OPERATOR_REJECTIONS.filter((reason) => !text.includes(`"${reason}"`)),
      [],
    );
  });

  it('names in docs/operating/upgrading.md, "Rolling out a release", only migrations that exist, as many as it says', () => {
    const migrations = new Set(readdirSync(join(ROOT, 'prisma', 'migrations')));
    const releases = releaseMigrations(read('docs/operating/upgrading.md'));
    assert.ok(releases.length >= 5, `only ${releases.length} release sections found`);
    assert.deepEqual(
      releases.flatMap(({ title, named, said }) => [
        ...named.filter((name) => !migrations.has(name)).map((name) => `${title}: ${name} does not exist`),
        ...(said !== undefined && said !== named.length
          ? [`${title}: says ${said} migrations, names ${named.length}`]
          : []),
      ]),
      [],
    );
  });

  it('names in docs/operating/upgrading.md, "Rolling out a release", every migration since the first it names', () => {
    const rollout = section(read('docs/operating/upgrading.md'), 'Rolling out a release');
    const named = new Set([...rollout.matchAll(/`(\d{14}_\w+)`/g)].map((m) => m[1]));
    const oldest = [...named].sort()[0];
    const unnamed = readdirSync(join(ROOT, 'prisma', 'migrations'))
      .filter((name) => /^\d{14}_/.test(name) && name >= oldest && !named.has(name))
      .sort();
    assert.deepEqual(unnamed, [], 'say what each asks of a rolling upgrade, or name it among those that ask nothing');
  });

  it('finds a section that says fewer migrations than it names', () => {
    const text =
      '## Rolling out a release\n\n### R\n\nTwo migrations. `20261122000000_foundation`, `20261122010000_catalogue`, `20261122020000_ledger`.\n';
    assert.deepEqual(releaseMigrations(text), [
      {
        title: 'R',
        named: ['20261122000000_foundation', '20261122010000_catalogue', '20261122020000_ledger'],
        said: 2,
      },
    ]);
  });

  it('lists every transfer kind in docs/operating/metrics.md, "Transfer kinds", in the order of the code', () => {
    assert.deepEqual(firstCells(section(read('docs/operating/metrics.md'), 'Transfer kinds')), [...TRANSFER_KINDS]);
  });
});
