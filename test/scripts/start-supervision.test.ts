// `npm start` keeps what it started running: an API, a worker or a Temporal dev server killed
// with SIGKILL is started again (the API answers once more); PostgreSQL stopped the way `pg_ctl stop -m immediate` stops it (SIGQUIT to
// the postmaster) is started again on the same data while the API keeps answering /healthz and
// answers 503 with Retry-After, never a refused connection, until the database is back.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { devStackTestEnv, freeDevStackPorts } from '../helpers/dev-stack';

const ROOT = join(__dirname, '..', '..');

/** Pids of the processes whose parent is `parent` and whose command line matches `pattern`. */
function childrenOf(parent: number, pattern: RegExp): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (ppid === parent && pattern.test(cmdline)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, output: () => string): Promise<T> {
  for (let i = 0; i < 360; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 500));
  }
  assert.fail(`${what} never happened:\n${output().slice(-4000)}`);
}

describe('scripts/start.ts supervision (npm start)', function () {
  this.timeout(480_000);
  let dataDir: string;
  let stack: ChildProcess | undefined;
  let output = '';
  let apiUrl: string;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'rewards-supervision-'));
    const ports = await freeDevStackPorts();
    apiUrl = `http://127.0.0.1:${ports.api}`;
    stack = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'start.ts')], {
      cwd: ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: devStackTestEnv(dataDir, ports),
    });
    stack.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    stack.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    await until(
      'the stack ready',
      () => status('/readyz').then((s) => (s === 200 ? true : undefined)),
      () => output,
    );
  });
  after(async () => {
    if (stack && stack.exitCode === null) {
      const exited = once(stack, 'exit');
      process.kill(-stack.pid!, 'SIGINT');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 90_000))]);
      if (stack.exitCode === null) process.kill(-stack.pid!, 'SIGKILL');
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** The status of GET `path`, or 'refused' when nothing answered. */
  const status = (path: string) =>
    fetch(apiUrl + path).then(
      (r) => r.status,
      () => 'refused' as const,
    );

  it('starts a killed API again', async () => {
    const [api] = childrenOf(stack!.pid!, /api\/server\.ts/);
    assert.ok(api, 'the API process');
    process.kill(api, 'SIGKILL');
    const restarted = await until(
      'a new API process',
      async () => childrenOf(stack!.pid!, /api\/server\.ts/).find((pid) => pid !== api),
      () => output,
    );
    assert.notEqual(restarted, api);
    await until(
      'the API ready again',
      () => status('/readyz').then((s) => (s === 200 ? true : undefined)),
      () => output,
    );
  });

  it('starts a killed worker again', async () => {
    const [worker] = childrenOf(stack!.pid!, /worker\/main\.ts/);
    assert.ok(worker, 'the worker process');
    process.kill(worker, 'SIGKILL');
    await until(
      'a new worker process',
      async () => childrenOf(stack!.pid!, /worker\/main\.ts/).find((pid) => pid !== worker),
      () => output,
    );
  });

  it('starts a killed Temporal dev server again on the same port, and the API reaches it', async () => {
    const [temporal] = childrenOf(stack!.pid!, /server start-dev/);
    assert.ok(temporal, 'the Temporal dev server');
    process.kill(temporal, 'SIGKILL');
    await until(
      'a new Temporal dev server',
      async () => childrenOf(stack!.pid!, /server start-dev/).find((pid) => pid !== temporal),
      () => output,
    );
    await until(
      'the API ready again',
      () => status('/readyz').then((s) => (s === 200 ? true : undefined)),
      () => output,
    );
  });

  it('starts PostgreSQL again after an immediate stop; meanwhile the API answers 503, never refuses', async () => {
    const [postmaster] = childrenOf(stack!.pid!, /bin\/postgres /);
    assert.ok(postmaster, 'the postmaster');
    const seen = new Set<number | 'refused'>();
    process.kill(postmaster, 'SIGQUIT');
    await until(
      'PostgreSQL back',
      async () => {
        const health = await status('/healthz');
        const ready = await status('/readyz');
        seen.add(health === 200 ? ready : health);
        return ready === 200 && childrenOf(stack!.pid!, /bin\/postgres /).some((p) => p !== postmaster)
          ? true
          : undefined;
      },
      () => output,
    );
    assert.ok(!seen.has('refused'), `answers seen: ${[...seen].join(', ')}`);
    const res = await fetch(`${apiUrl}/readyz`);
    assert.equal(res.status, 200);
  });
});
