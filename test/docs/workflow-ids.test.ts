// Workflow ids as the operating docs write them (`payout/<issuer>/<po id>`) are what an operator
// types into the Temporal UI, so each must be one the code makes: the id functions are called
// with placeholders and compared with every id-shaped `code` span of the docs, and the runbook's
// list ("Temporal UI") must name every one. Decision records are left out: they tell the ids of
// their time.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** A placeholder as the docs write one (`<po id>`, `iss_...`, `...`), and as the test passes one. */
const PLACEHOLDER = /<[^<>`]+>|\b[a-z]+_\.\.\.|\.\.\./g;
/** An id with its placeholders made alike: `payout/<issuer>/<po id>` → `payout/*\/*`. */
const shape = (id: string) => id.replace(PLACEHOLDER, '*');

/** Where id functions are declared: the workflows' modules and the hand-over's. */
const SOURCES = [
  ...readdirSync(join(ROOT, 'workflows'))
    .filter((file) => file.endsWith('.ts'))
    .map((file) => `workflows/${file}`),
  'core/domain/handover.ts',
];

/** Every exported `...WorkflowId` function, by name, with the file that declares it. */
function idFunctions(): Map<string, string> {
  const found = new Map<string, string>();
  for (const file of SOURCES)
    for (const m of read(file).matchAll(/^export function (\w+WorkflowId)\(/gm)) found.set(m[1], file);
  return found;
}

type IdFunction = (...args: unknown[]) => string;
const load = (name: string, file: string) =>
  (require(join(ROOT, file)) as Record<string, IdFunction>)[name] ?? assert.fail(`${file} exports no ${name}`);

/** How each id function is called with placeholders: every form of id it makes. */
const p = '<p>';
const CALLS: Record<string, unknown[][]> = {
  lifecycleWorkflowId: [[p, 'auth', { id: p }]],
  webhookDeliveryWorkflowId: [
    [p, p],
    [p, p, p],
  ],
};

/** Every workflow id the code makes, as a shape. */
function codeIds(): string[] {
  const made = [...idFunctions()].flatMap(([name, file]) => {
    const fn = load(name, file);
    return (CALLS[name] ?? [Array.from({ length: fn.length }, () => p)]).map((args) => fn(...args));
  });
  return [...new Set(made.map(shape))];
}

/** Id-shaped code spans: a word, a slash, then a placeholder (fenced blocks left out). */
export function documentedIds(markdown: string): string[] {
  const prose = markdown.replace(/^\s*```[\s\S]*?^\s*```/gm, '');
  return [...prose.matchAll(/`([a-z][a-z-]*\/(?:<[^`]*|[a-z]*_?\.\.\.[^`]*))`/g)].map((m) => m[1]);
}

/** Whether a documented id is one the code makes; `payout/...` abbreviates any id under `payout/`. */
export function isCodeId(id: string, ids: string[]): boolean {
  if (id.endsWith('/...')) return ids.some((known) => known.startsWith(id.slice(0, -'...'.length)));
  return ids.includes(shape(id));
}

const DOCS = [
  'README.md',
  'CONTRIBUTING.md',
  'docs/architecture.md',
  'docs/integration-guide.md',
  ...readdirSync(join(ROOT, 'docs', 'operating'))
    .filter((file) => file.endsWith('.md'))
    .map((file) => `docs/operating/${file}`),
];

describe('workflow ids in the docs', () => {
  const ids = codeIds();

  it('makes every id from placeholders', () => {
    for (const id of [
      'txn/*/*',
      'webhook/*/*',
      'webhook/*/*/recovered/*',
      'claim/*/*',
      'payout/*/*',
      'expire/*/clock-*',
    ])
      assert.ok(ids.includes(id), `${id} not among ${ids.join(', ')}`);
  });

  it('writes only ids the code makes', () => {
    const wrong = DOCS.flatMap((file) =>
      documentedIds(read(file))
        .filter((id) => !isCodeId(id, ids))
        .map((id) => `${file}: ${id}`),
    );
    assert.deepEqual(wrong, []);
  });

  it('lists every id the code makes in the runbook, "Temporal UI"', () => {
    const runbook = read('docs/operating/runbook.md');
    const start = runbook.indexOf('\n## Temporal UI\n');
    assert.ok(start >= 0, 'no heading "Temporal UI"');
    const end = runbook.indexOf('\n## ', start + 1);
    const listed = new Set(documentedIds(runbook.slice(start, end)).map(shape));
    assert.deepEqual(
      ids.filter((id) => !listed.has(id)),
      [],
    );
  });

  it('finds a wrong id, and takes an abbreviation under a right prefix', () => {
    const found = documentedIds('a run `statement-run/...`, then `payout/...` and `claim/<issuer>/<claim id>`');
    assert.deepEqual(found, ['statement-run/...', 'payout/...', 'claim/<issuer>/<claim id>']);
    assert.deepEqual(
      found.filter((id) => !isCodeId(id, ids)),
      ['statement-run/...'],
    );
  });
});
