// Lists a reader of the docs relies on, checked against the code that defines them, so that a new
// id prefix, webhook type, reward event type or transfer kind cannot be added without the
// document that lists it naming it (and a removed one cannot linger there).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ID_PREFIXES } from '../../core/ids';
import { WEBHOOK_TYPES } from '../../core/webhooks/payloads';
import { REWARD_EVENT_TYPES, TRANSFER_KINDS } from '../../core/ledger';

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

/** Prefixes of records only the operator sees: issuers, their tokens, the audit log, merchant statements. */
const OPERATOR_ONLY = new Set(['iss', 'tok', 'aud', 'stm', 'stmrun', 'stmpay']);

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

  it('finds a list that lacks one (the check above can fail)', () => {
    const spans = codeSpans('`a`, `b`');
    assert.deepEqual(
      ['a', 'b', 'c'].filter((t) => !spans.has(t)),
      ['c'],
    );
  });
});

/** The first cell of each row of the Markdown tables in a text, when it is one `code` span. */
const firstCells = (text: string) => [...text.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]);

describe('lists in the operating docs', () => {
  it('lists every transfer kind in metrics.md, "Transfer kinds", in the order of the code', () => {
    assert.deepEqual(firstCells(section(read('docs/operating/metrics.md'), 'Transfer kinds')), [...TRANSFER_KINDS]);
  });
});
