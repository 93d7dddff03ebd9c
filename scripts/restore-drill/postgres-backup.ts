// The restore drill's PostgreSQL side, done as docs/operating/backup-and-restore.md tells an
// operator to: `pg_dump --format=custom` of a running database, `pg_restore` into a fresh server.
// pg_dump refuses a server newer than itself, and the npm package's PostgreSQL ships no pg_dump,
// so the drill runs the server of an installed PostgreSQL with its own client programs (Debian's
// `postgresql` package). The source's ledger is read in the very snapshot the dump is taken in
// (pg_export_snapshot, then pg_dump --snapshot), so "equal to the source at the backup's point"
// is exact even while purchases are posted meanwhile.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);
const PROGRAMS = ['initdb', 'postgres', 'pg_dump', 'pg_restore'];

export interface PostgresTools {
  binDir: string;
  /** "pg_dump (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)" */
  version: string;
}

/** PG_BINDIR, else `pg_config --bindir`, else the newest /usr/lib/postgresql/<N>/bin: one holding server and client. */
export function findPostgresTools(): PostgresTools {
  const candidates = [process.env.PG_BINDIR, pgConfigBindir(), ...debianBinDirs()].filter((d): d is string => !!d);
  const binDir = candidates.find((dir) => PROGRAMS.every((p) => existsSync(join(dir, p))));
  if (!binDir)
    throw new Error(
      `the restore drill needs one PostgreSQL installation's ${PROGRAMS.join(', ')} (looked in ${candidates.join(', ') || 'nothing'}): ` +
        '`apt-get install postgresql`, or set PG_BINDIR to its bin folder',
    );
  const version = execFileSync(join(binDir, 'pg_dump'), ['--version'], { encoding: 'utf8' }).trim();
  return { binDir, version };
}

function pgConfigBindir(): string | undefined {
  try {
    return execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

function debianBinDirs(): string[] {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a))
    .map((v) => join(root, v, 'bin'));
}

/** Each ledger account's balance: as cached on the account, and as the sum of its entries (signed by its side). */
export type Balances = Map<string, { cachedMinor: string; entriesMinor: string }>;

/** What the source held at the backup's point, read in the snapshot pg_dump dumped. */
export interface SourceAtBackup {
  balances: Balances;
  /** Sum of every entry: 0 in a ledger that balances. */
  trialBalanceMinor: string;
  /** Events stored but not processed yet (ids), and how many of them were still queued for their hand-over. */
  pending: string[];
  queued: number;
  /** Previewed authorizations with no settlement stored (ids): their runs wait in Temporal. */
  openPreviews: string[];
  dumpBytes: number;
}

const BALANCES = `
  SELECT a.id, a.balance_minor::text AS cached,
         (CASE a.normal_side WHEN 'debit' THEN 1 ELSE -1 END * coalesce(sum(e.amount_minor), 0))::text AS entries
    FROM ledger_account a LEFT JOIN ledger_entry e ON e.account_id = a.id
   GROUP BY a.id ORDER BY a.id`;

export async function readBalances(client: pg.ClientBase): Promise<Balances> {
  const { rows } = await client.query<{ id: string; cached: string; entries: string }>(BALANCES);
  return new Map(rows.map((r) => [r.id, { cachedMinor: r.cached, entriesMinor: r.entries }]));
}

export async function readTrialBalance(client: pg.ClientBase): Promise<string> {
  const { rows } = await client.query<{ total: string }>(
    'SELECT coalesce(sum(amount_minor), 0)::text AS total FROM ledger_entry',
  );
  return rows[0].total;
}

/** Authorizations previewed whose settlement is not stored: their runs wait for it (scripts/admin/recovery-commands.ts). */
export const OPEN_PREVIEWS = `
  SELECT a.id FROM ingested_event a
   WHERE a.kind = 'auth' AND a.state <> 'reversed' AND a.reward_status = 'previewed'
     AND NOT EXISTS (SELECT 1 FROM ingested_event s WHERE s.issuer_id = a.issuer_id AND s.kind = 'settled'
                       AND s.authorization_external_id = a.external_id)`;

async function inFlight(client: pg.ClientBase) {
  const ids = async (sql: string) => (await client.query<{ id: string }>(sql)).rows.map((r) => r.id);
  return {
    pending: await ids(`SELECT id FROM ingested_event WHERE reward_status = 'pending'`),
    queued: (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM handover_pending')).rows[0].n,
    openPreviews: await ids(OPEN_PREVIEWS),
  };
}

/**
 * `pg_dump --format=custom` of the database into `file`, in a snapshot this function exports and
 * reads the ledger in first. `between` runs once the snapshot is taken (the drill resumes the
 * worker there): nothing committed after that point is in the dump or in what is returned.
 */
export async function dumpWithSnapshot(
  tools: PostgresTools,
  databaseUrl: string,
  file: string,
  between: () => void,
): Promise<SourceAtBackup> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const { rows } = await client.query<{ snapshot: string }>('SELECT pg_export_snapshot() AS snapshot');
    const balances = await readBalances(client);
    const trialBalanceMinor = await readTrialBalance(client);
    const atBackup = await inFlight(client);
    between();
    // The exporting transaction stays open until pg_dump has imported its snapshot (and here, done).
    await run(join(tools.binDir, 'pg_dump'), [
      '--format=custom',
      `--snapshot=${rows[0].snapshot}`,
      `--file=${file}`,
      `--dbname=${databaseUrl}`,
    ]);
    await client.query('COMMIT');
    return { balances, trialBalanceMinor, ...atBackup, dumpBytes: statSync(file).size };
  } finally {
    await client.end();
  }
}

/** `pg_restore` of a custom-format dump into an empty database; stops at the first error. */
export async function restoreDump(tools: PostgresTools, file: string, databaseUrl: string): Promise<void> {
  await run(join(tools.binDir, 'pg_restore'), ['--exit-on-error', '--no-owner', `--dbname=${databaseUrl}`, file]);
}

/** Accounts whose balance (cached or from entries) differs between the two, or that only one has. */
export function balanceDifferences(expected: Balances, actual: Balances): string[] {
  const ids = [...new Set([...expected.keys(), ...actual.keys()])].sort();
  return ids.flatMap((id) => {
    const want = expected.get(id);
    const got = actual.get(id);
    if (want?.cachedMinor === got?.cachedMinor && want?.entriesMinor === got?.entriesMinor) return [];
    return [`${id}: ${JSON.stringify(want ?? null)} at the backup, ${JSON.stringify(got ?? null)} restored`];
  });
}
