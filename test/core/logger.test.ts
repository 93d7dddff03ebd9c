// The JSON logger buffers lines for throughput, but a quiet process must not hold a line back
// until it exits: the dev stack's supervisor logs a restart once, and an operator reads it then.
import assert from 'node:assert/strict';
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

describe('core/logger', () => {
  let child: ChildProcessByStdio<null, Readable, null> | undefined;
  // Killed even when the test times out: the child would otherwise outlive the run.
  afterEach(() => child?.kill('SIGKILL'));

  it('writes a lone line of a quiet process while the process still runs', async function () {
    // The child never exits by itself: without the periodic flush the line never comes.
    this.timeout(15_000);
    const script =
      "const { createLogger } = require('./core/logger');" +
      "createLogger('info', 'probe').error('restarted');" +
      'setInterval(() => undefined, 1000);';
    child = spawn(process.execPath, ['--import', 'tsx', '-e', script], {
      cwd: ROOT,
      env: { ...process.env, NODE_ENV: 'production' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const running = child;
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      running.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('\n')) resolve(out);
      });
      running.once('exit', (code) => reject(new Error(`exited (${code}) before writing: ${out}`)));
    });
    assert.equal(JSON.parse(line.split('\n')[0]).msg, 'restarted');
    assert.equal(running.exitCode, null, 'the line came while the process ran');
  });
});
