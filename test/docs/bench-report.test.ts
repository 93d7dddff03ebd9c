// Bench figures in the documents are generated or cited, never retold (docs/benchmarks.md,
// "Other figures in the documents"): each section `npm run bench:report` writes must be what it
// makes of the committed bench/history.ndjson, and every other figure must name a run the history
// holds and show the value that run recorded. Each check is shown failing on a figure edited by
// hand.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HISTORY_FILE } from '../../bench/record';
import { parseHistory, renderDocuments, type HistoryRun } from '../../bench/history-report';
import { citationProblems, citationsIn } from '../../bench/history-citations';

const ROOT = join(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

function markdownUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? markdownUnder(path) : entry.name.endsWith('.md') ? [path] : [];
  });
}

const DOCUMENTS = [
  ...['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md'].filter((file) => existsSync(join(ROOT, file))),
  ...markdownUnder('docs'),
];

/** The documents whose generated sections differ from what the history makes of them. */
function staleDocuments(history: HistoryRun[], readDocument: (file: string) => string): string[] {
  return [...renderDocuments(history, readDocument)]
    .filter(([file, text]) => readDocument(file) !== text)
    .map(([file]) => file);
}

describe('bench figures in the documents (bench/history.ndjson)', () => {
  const history = parseHistory(readFileSync(HISTORY_FILE, 'utf8'));

  it('shows in each generated section what `npm run bench:report` makes of the committed history', () => {
    assert.deepEqual(staleDocuments(history, read), [], 'run npm run bench:report and commit the documents');
  });

  it('fails a figure edited by hand in a generated section', () => {
    const row = /(\| Sustained: lifecycle \/ floor \| )([\d.]+)/;
    const committed = read('docs/benchmarks.md');
    assert.match(committed, row);
    const edited = committed.replace(
      row,
      (_, head: string, value: string) => `${head}${(Number(value) + 12).toFixed(1)}`,
    );
    const readEdited = (file: string) => (file === 'docs/benchmarks.md' ? edited : read(file));
    assert.deepEqual(staleDocuments(history, readEdited), ['docs/benchmarks.md']);
  });

  it('cites, for every other figure, a run the history holds and the value it recorded', () => {
    const problems = DOCUMENTS.flatMap((file) => citationProblems(read(file), history).map((p) => `${file}: ${p}`));
    assert.deepEqual(problems, []);
  });

  it('fails a cited figure edited by hand, and a run the history does not hold', () => {
    const decision = 'docs/decisions/0033-measuring-what-tracing-costs.md';
    const cited = citationsIn(read(decision)).find((c) => c.figure !== undefined);
    assert.ok(cited, `${decision} cites no figure`);
    const edited = cited.text.replace(/^\[(\d+)/, (_, digits: string) => `[${Number(digits) + 1}`);
    assert.match(citationProblems(edited, history).join('\n'), /is not what run .* recorded/);
    const unknownRun = cited.text.replace(/ \d\d:\d\dZ/, ' 23:59Z');
    assert.match(citationProblems(unknownRun, history).join('\n'), /no run .* in bench\/history\.ndjson/);
  });
});
