// `npm start`'s Ctrl-C: the stack stops in the documented order, API →
// worker → Temporal → PostgreSQL, so no process loses a service it still uses. Tried as at a
// terminal: the supervisor runs in a process group of its own and the whole group gets SIGINT,
// as a Ctrl-C sends it to every process of the foreground group.
//
// Run as root (as CI is), it runs from a clone under a 0700 directory with its data in the
// clone's .data, as a root user who clones into their home does.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { devStackTestEnv, freeDevStackPorts, stopDevStack } from '../helpers/dev-stack';
import { makePrivateClone, type PrivateClone } from '../helpers/private-clone';

const ROOT = join(__dirname, '..', '..');
// What a process says when a service it uses has gone before it.
const LOST_A_SERVICE =
  /ECONNREFUSED|connection refused|Connection terminated|terminating connection|UNAVAILABLE|retrying|the database is unreachable/i;

interface LogLine {
  time: string;
  name: string;
  msg: string;
  level: number;
  process?: string;
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

describe('scripts/start.ts (npm start)', function () {
  this.timeout(240_000);
  const asRoot = process.getuid?.() === 0;
  let clone: PrivateClone | undefined;
  let dataDir: string | undefined;
  after(() => {
    clone?.remove();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it(`stops on Ctrl-C in order: API, worker, Temporal, PostgreSQL, with no process left behind${asRoot ? ' (from a 0700 clone)' : ''}`, async () => {
    clone = asRoot ? makePrivateClone() : undefined;
    dataDir = clone ? undefined : mkdtempSync(join(tmpdir(), 'rewards-start-'));
    const root = clone?.dir ?? ROOT;
    const ports = await freeDevStackPorts();
    const stack = spawn(process.execPath, ['--import', 'tsx', join(root, 'scripts', 'start.ts')], {
      cwd: root,
      detached: true, // its own process group, as the foreground group of a terminal
      stdio: ['ignore', 'pipe', 'pipe'],
      env: devStackTestEnv(dataDir ?? '.data', ports),
    });
    let output = '';
    stack.stdout.on('data', (d: Buffer) => (output += d.toString()));
    stack.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = once(stack, 'exit');
    try {
      const startedAt = performance.now();
      for (;;) {
        assert.equal(stack.exitCode, null, `npm start exited:\n${output}`);
        const ready = await fetch(`http://127.0.0.1:${ports.api}/readyz`).then(
          (r) => r.ok,
          () => false,
        );
        // The SDK's own log is written at once; ours (pino) is buffered until the process exits.
        if (ready && /Worker state changed .*RUNNING/.test(output)) break;
        assert.ok(performance.now() - startedAt < 180_000, `not ready after 3 minutes:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      const before = output.length;
      const signalledAt = new Date().toISOString();
      const signalled = performance.now();
      process.kill(-stack.pid!, 'SIGINT');
      const [code] = await exited;
      const stopMs = performance.now() - signalled;

      // After the signal: our JSON lines by their time (they were buffered), the rest as they came.
      const json = output
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => ({ line: l, ...(JSON.parse(l) as LogLine) }));
      const lines = json.filter((l) => l.time >= signalledAt);
      const after = [
        ...lines.map((l) => l.line),
        ...output
          .slice(before)
          .split('\n')
          .filter((l) => !l.startsWith('{')),
      ].join('\n');
      assert.equal(code, 0, after);
      const stopped = lines.filter((l) => l.name === 'stack' && l.msg === 'stopped').map((l) => l.process);
      assert.deepEqual(stopped, ['API', 'worker', 'Temporal dev server', 'PostgreSQL'], after);
      // Each in turn: the API finished before the worker began to stop, and so on.
      const at = (name: string, msg: string) => lines.findIndex((l) => l.name === name && l.msg === msg);
      assert.ok(at('api', 'API stopped') >= 0 && at('api', 'API stopped') < at('worker', 'worker stopped'), after);
      assert.doesNotMatch(after, LOST_A_SERVICE);
      assert.deepEqual(
        lines.filter((l) => l.level >= 50),
        [],
        'no errors after Ctrl-C',
      );
      // As root from the clone: the cluster was kept where the postgres user can reach it.
      if (clone)
        assert.match(
          output,
          /PostgreSQL data kept in \/var\/lib\/rewards-dev\/data\/\w+ \(linked from .*\/\.data\/postgres\)/,
        );
      for (const [name, port] of Object.entries(ports))
        assert.equal(await portOpen(port), false, `${name} port ${port} still open`);
      console.log(`      (ready in ${Math.round(signalled - startedAt)} ms, stopped in ${Math.round(stopMs)} ms)`);
    } finally {
      // A failed test still stops the stack in order.
      await stopDevStack(stack, exited);
    }
  });
});
