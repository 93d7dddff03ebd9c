// A reader who follows a reference must land somewhere. Code comments and documents cite a
// document's section as `docs/operating/runbook.md, "Shutdown and probes"` (a path, then the
// heading in quotes), and documents link to each other as Markdown links with an optional
// #anchor: each cited heading must exist in the cited file, and each link's file and anchor
// must resolve. A source file named in a comment or a document (`core/temporal-connection.ts`)
// must exist too. The README's shape (at most 200 lines, none over 120 columns outside code
// blocks) is checked here too, so that it stays a front page.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const SOURCE_DIRS = ['api', 'activities', 'core', 'workflows', 'worker', 'prisma', 'scripts', 'test', 'bench'];
const MORE_SOURCES = ['clients', 'examples', '.ci', 'eslint.config.mjs', '.env.example'];
const SKIPPED_DIRS = new Set(['node_modules', 'generated', 'dist', '.tools', '.data', 'test-output', 'histories']);
/** The design documents live beside the repository (../shared), not in it. */
const OUTSIDE = new Set(['SPEC.md', 'API.md', 'DESIGN.md', 'STYLE.md']);

function walk(path: string, keep: (file: string) => boolean): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return keep(path) ? [path] : [];
  return readdirSync(path, { withFileTypes: true }).flatMap((entry) =>
    SKIPPED_DIRS.has(entry.name) ? [] : walk(join(path, entry.name), keep),
  );
}

// Applied migrations are never edited (the runner records their checksums), so their SQL is not read.
const isCode = (file: string) => /\.(ts|js|mjs)$|\/run$|\.env\.example$/.test(file);
const isDoc = (file: string) => file.endsWith('.md');
const rel = (file: string) => relative(ROOT, file);

export function markdownFiles(): string[] {
  return [
    ...['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md'].map((f) => join(ROOT, f)).filter((f) => existsSync(f)),
    ...walk(join(ROOT, 'docs'), isDoc),
    ...walk(join(ROOT, 'examples'), isDoc),
    ...walk(join(ROOT, 'clients'), isDoc),
  ];
}

function codeFiles(): string[] {
  return [...SOURCE_DIRS, ...MORE_SOURCES].flatMap((dir) => walk(join(ROOT, dir), isCode));
}

/** Headings of a Markdown file, outside code blocks. */
export function headings(markdown: string): string[] {
  const found: string[] = [];
  let inBlock = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) inBlock = !inBlock;
    const m = inBlock ? null : /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (m) found.push(m[1]);
  }
  return found;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Citations of a document's heading, with comment markers at line breaks taken out. */
export function citations(text: string): { file: string; heading: string }[] {
  const joined = text.replace(/\n[ \t]*(?:\/\/|\*|#|--)?[ \t]*/g, ' ');
  const found: { file: string; heading: string }[] = [];
  for (const m of joined.matchAll(/((?:[\w.-]+\/)*(?:README|[\w.-]+\.md))(?:'s)?,?\s+"([^"]+)"/g)) {
    found.push({ file: m[1] === 'README' ? 'README.md' : m[1], heading: m[2] });
  }
  return found;
}

/** Where a cited or linked path points: beside the citing file, else from the repository root. */
function resolveTarget(from: string, target: string): string {
  const beside = normalize(join(dirname(from), target));
  return existsSync(beside) || target.startsWith('.') ? beside : join(ROOT, target);
}

function problemsOfCitations(file: string, text: string): string[] {
  const problems: string[] = [];
  for (const m of text.matchAll(/(?<![\w./-])(docs\/[\w/.-]+\.md)\b/g)) {
    if (!existsSync(join(ROOT, m[1]))) problems.push(`${rel(file)}: names ${m[1]}, which does not exist`);
  }
  for (const { file: cited, heading } of citations(text)) {
    if (OUTSIDE.has(cited)) continue;
    const target = resolveTarget(file, cited);
    if (!existsSync(target)) {
      problems.push(`${rel(file)}: cites ${cited}, which does not exist`);
      continue;
    }
    const wanted = heading.toLowerCase();
    if (!headings(readFileSync(target, 'utf8')).some((h) => h.toLowerCase() === wanted)) {
      problems.push(`${rel(file)}: cites ${cited}, "${heading}": no such heading`);
    }
  }
  return problems;
}

/**
 * Source files named by their path from the repository root (`worker/webhook-relay.ts`,
 * `test/docs/lists.test.ts`). Compiled names (`dist/...js`) are not sources, and a path with a
 * placeholder (`<area>`, `{id}`, `*`) names no one file.
 */
export function sourcePaths(text: string): string[] {
  const dirs = [
    'api',
    'activities',
    'core',
    'workflows',
    'worker',
    'prisma',
    'scripts',
    'test',
    'bench',
    'clients',
    'examples',
  ];
  const pattern = new RegExp(
    `(?<![\\w./<{*-])((?:${dirs.join('|')})/[\\w./-]+\\.(?:ts|sql|prisma|json|ndjson))\\b`,
    'g',
  );
  return [...text.matchAll(pattern)].map((m) => m[1]);
}

/** Paths in tests' own fixtures (examples of names, not references), and outputs git ignores. */
const NOT_SOURCES = new Set([
  'core/domain/x.ts',
  'api/x/catalogue-store.ts',
  'api/x/records.ts',
  'bench/results/latest.json',
]);

function problemsOfSourcePaths(file: string, text: string): string[] {
  // This file names a missing one on purpose, to show the check finds it.
  if (file === __filename) return [];
  return sourcePaths(text)
    .filter((path) => !NOT_SOURCES.has(path) && !existsSync(join(ROOT, path)))
    .map((path) => `${rel(file)}: names ${path}, which does not exist`);
}

function problemsOfLinks(file: string, text: string): string[] {
  const problems: string[] = [];
  const prose = text.replace(/```[\s\S]*?```/g, '');
  for (const m of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
    const link = m[1];
    if (/^[a-z]+:/.test(link)) continue;
    const [path, anchor] = link.split('#');
    // Markdown resolves a link beside the file that holds it.
    const target = path === '' ? file : normalize(join(dirname(file), path));
    if (!existsSync(target)) {
      problems.push(`${rel(file)}: links ${link}, which does not exist`);
      continue;
    }
    if (anchor && !statSync(target).isDirectory()) {
      const anchors = headings(readFileSync(target, 'utf8')).map(slug);
      if (!anchors.includes(anchor)) problems.push(`${rel(file)}: links ${link}: no such anchor`);
    }
  }
  return problems;
}

describe('documentation references', () => {
  it('finds a citation, with the comment marker of a wrapped line taken out', () => {
    assert.deepEqual(citations('see docs/operating/runbook.md,\n// "Shutdown and probes" for it'), [
      { file: 'docs/operating/runbook.md', heading: 'Shutdown and probes' },
    ]);
    assert.equal(slug('Changing a workflow that waits for days'), 'changing-a-workflow-that-waits-for-days');
    assert.equal(slug('The sandbox: test clock and forced outcomes'), 'the-sandbox-test-clock-and-forced-outcomes');
  });

  it('cites only headings that exist, from code comments and documents', () => {
    const problems = [...codeFiles(), ...markdownFiles()].flatMap((file) =>
      problemsOfCitations(file, readFileSync(file, 'utf8')),
    );
    assert.deepEqual(problems, []);
  });

  it('finds a source path, and only a whole one', () => {
    assert.deepEqual(
      sourcePaths('built by worker/connection.ts (see core/temporal-connection.ts, dist/worker/main.js)'),
      ['worker/connection.ts', 'core/temporal-connection.ts'],
    );
    assert.deepEqual(sourcePaths('src/api/x.ts, prisma/migrations/<ts>_<name>/migration.sql'), []);
  });

  it('names only source files that exist, from code comments and documents', () => {
    const problems = [...codeFiles(), ...markdownFiles()].flatMap((file) =>
      problemsOfSourcePaths(file, readFileSync(file, 'utf8')),
    );
    assert.deepEqual(problems, []);
  });

  it('links only files and anchors that exist, between documents', () => {
    const problems = markdownFiles().flatMap((file) => problemsOfLinks(file, readFileSync(file, 'utf8')));
    assert.deepEqual(problems, []);
  });

  it('keeps the README a front page: at most 200 lines, none over 120 columns outside code', () => {
    const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').trimEnd().split('\n');
    assert.ok(lines.length <= 200, `README.md has ${lines.length} lines`);
    let inBlock = false;
    const wide = lines.flatMap((line, i) => {
      if (line.startsWith('```')) inBlock = !inBlock;
      return !inBlock && [...line].length > 120 ? [`line ${i + 1}: ${[...line].length} columns`] : [];
    });
    assert.deepEqual(wide, []);
  });
});
