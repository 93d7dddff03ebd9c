// What the migration runner (prisma/migrate.ts) reads in a migration's SQL beyond running it:
// whether it must run outside a transaction, its statements one by one for that case, and the
// indexes such a migration builds concurrently. Plain functions over the text, no I/O.
//
// A migration runs in one transaction unless its leading comment lines include
// NO_TRANSACTION_MARKER. PostgreSQL refuses `CREATE INDEX CONCURRENTLY` (and its DROP) inside a
// transaction block, and a multi-statement query string is one implicit block, so such a
// migration is sent one statement at a time.

export const NO_TRANSACTION_MARKER = '-- migrate: no transaction';

/**
 * MIGRATION_LOCK_TIMEOUT's default: the service's own transactions hold their locks for
 * milliseconds, so a wait this long means a long transaction (an export, an operator's session)
 * that the migration would otherwise queue every later query of the table behind.
 */
export const DEFAULT_MIGRATION_LOCK_TIMEOUT_MS = 5_000;

export class MigrationFormatError extends Error {}

/** Whether the comment lines before the first statement hold the marker. */
export function runsOutsideTransaction(sql: string): boolean {
  for (const line of sql.split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '') continue;
    if (!trimmed.startsWith('--')) return false;
    if (trimmed.toLowerCase() === NO_TRANSACTION_MARKER) return true;
  }
  return false;
}

/**
 * The statements of a script, each without its closing semicolon, comments kept. Semicolons
 * inside quotes ('...', "..."), dollar quotes ($$...$$, $tag$...$tag$) and comments (-- and
 * /* *\/) do not end a statement. A chunk of nothing but comments and blanks is dropped.
 */
export function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let start = 0;
  let i = 0;
  const push = (end: number) => {
    const text = sql.slice(start, end).trim();
    if (stripComments(text).trim() !== '') statements.push(text);
    start = end + 1;
  };
  while (i < sql.length) {
    const skipped = skipQuotedOrComment(sql, i);
    if (skipped > i) {
      i = skipped;
      continue;
    }
    if (sql[i] === ';') push(i);
    i++;
  }
  push(sql.length);
  return statements;
}

/** Where the quoted text or comment starting at `i` ends (exclusive), or `i` when none starts there. */
function skipQuotedOrComment(sql: string, i: number): number {
  const two = sql.slice(i, i + 2);
  if (two === '--') {
    const end = sql.indexOf('\n', i);
    return end < 0 ? sql.length : end + 1;
  }
  if (two === '/*') {
    const end = sql.indexOf('*/', i + 2);
    return end < 0 ? sql.length : end + 2;
  }
  const ch = sql[i];
  if (ch === "'" || ch === '"') {
    // A doubled quote inside is an escaped one: the scan simply closes and reopens.
    const end = sql.indexOf(ch, i + 1);
    return end < 0 ? sql.length : end + 1;
  }
  if (ch === '$') {
    const tag = /^\$[A-Za-z_]?[A-Za-z0-9_]*\$/.exec(sql.slice(i))?.[0];
    if (!tag) return i;
    const end = sql.indexOf(tag, i + tag.length);
    return end < 0 ? sql.length : end + tag.length;
  }
  return i;
}

function stripComments(text: string): string {
  return text.replace(/--[^\n]*/g, '').replace(/\/\*[\s\S]*?\*\//g, '');
}

const CONCURRENT_INDEX =
  /^\s*CREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\s+(IF\s+NOT\s+EXISTS\s+)?("(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)/i;

/**
 * The index a `CREATE [UNIQUE] INDEX CONCURRENTLY` statement builds (its name unquoted), with
 * whether it says IF NOT EXISTS; undefined for any other statement.
 */
export function concurrentIndex(statement: string): { name: string; ifNotExists: boolean } | undefined {
  const match = CONCURRENT_INDEX.exec(stripComments(statement));
  if (!match) return undefined;
  const raw = match[2];
  const name = raw.startsWith('"') ? raw.slice(1, -1).replace(/""/g, '"') : raw.toLowerCase();
  return { name, ifNotExists: match[1] !== undefined };
}

/**
 * Checks what makes a migration outside a transaction safe to run again after it failed
 * halfway: each concurrent index build says IF NOT EXISTS (so a re-run skips the indexes already
 * built; the runner drops one left INVALID by the failure before building it again), and it has
 * statements at all. Throws a MigrationFormatError naming the migration.
 */
export function checkOutsideTransaction(name: string, statements: string[]): void {
  if (statements.length === 0) throw new MigrationFormatError(`Migration ${name} has no statement.`);
  for (const statement of statements) {
    const index = concurrentIndex(statement);
    if (index && !index.ifNotExists)
      throw new MigrationFormatError(
        `Migration ${name} runs outside a transaction: write CREATE INDEX CONCURRENTLY IF NOT EXISTS ${index.name}, ` +
          'so that running it again after a failure skips what was built (CONTRIBUTING.md, "Add a migration").',
      );
  }
}
