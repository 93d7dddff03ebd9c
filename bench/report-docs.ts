// `npm run bench:report`: rewrites the sections of the documents that show bench figures
// (bench/history-report.ts) from bench/history.ndjson. Run it after recording a run, and commit
// the documents with the history; test/docs/bench-report.test.ts fails while they differ.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HISTORY_FILE } from './record';
import { parseHistory, renderDocuments } from './history-report';

const ROOT = join(__dirname, '..');

function main(): void {
  const history = parseHistory(readFileSync(HISTORY_FILE, 'utf8'));
  const documents = renderDocuments(history, (file) => readFileSync(join(ROOT, file), 'utf8'));
  for (const [file, text] of documents) {
    const changed = readFileSync(join(ROOT, file), 'utf8') !== text;
    if (changed) writeFileSync(join(ROOT, file), text);
    console.log(`[bench:report] ${file}: ${changed ? 'written' : 'already current'}`);
  }
}

main();
