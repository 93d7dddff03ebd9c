// Where the machine's CPU goes (bench/cpu.ts), read from a /proc written here: busy seconds of
// the machine, the same by group of processes, and the wait for a quiet machine.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuBetween, cpuSnapshot, machineCpuSeconds, machineQuiet } from '../../bench/cpu';

/** A /proc stat line: pid, (comm), state, ppid, then fields up to utime (14th) and stime (15th). */
function stat(pid: number, comm: string, ppid: number, utime: number, stime: number): string {
  return `${pid} (${comm}) S ${ppid} ${pid} ${pid} 0 -1 4194560 100 0 0 0 ${utime} ${stime} 0 0 20 0 1 0`;
}

/** A /proc/stat whose first line says the machine has been busy `busyTicks` (user) and idle 9000. */
function procStatLine(busyTicks: number): string {
  return `cpu  ${busyTicks} 0 0 9000 0 0 0 0 0 0\n`;
}

describe('bench CPU accounting', () => {
  it("reads the machine's busy CPU seconds from /proc/stat, idle and iowait left out", () => {
    const file = join(mkdtempSync(join(tmpdir(), 'stat-')), 'stat');
    writeFileSync(file, 'cpu  1000 10 300 9000 500 20 30 40 0 0\ncpu0 500 5 150 4500 250 10 15 20 0 0\n');
    assert.equal(machineCpuSeconds(file), 14);
  });

  it("groups the machine's CPU into the services' process trees, the Temporal server, PostgreSQL and the bench, process by process", () => {
    const proc = mkdtempSync(join(tmpdir(), 'proc-'));
    const write = (pid: number, line: string) => {
      mkdirSync(join(proc, String(pid)));
      writeFileSync(join(proc, String(pid), 'stat'), line);
    };
    write(10, stat(10, 'node', 1, 100, 50)); // the API's primary: 1.5 s
    write(11, stat(11, 'node (cluster) x', 10, 300, 100)); // its cluster worker, spaces and ) in the name: 4 s
    write(12, stat(12, 'sh', 11, 20, 0)); // a grandchild: 0.2 s
    write(20, stat(20, 'node', 1, 1000, 200)); // the Temporal worker: 12 s
    write(30, stat(30, 'postgres', 1, 5000, 5000)); // the postmaster: 100 s
    write(31, stat(31, 'postgres', 30, 200, 0)); // a backend: 2 s
    write(40, stat(40, 'temporal', 1, 700, 100)); // the dev server: 8 s
    write(50, stat(50, 'node', 1, 300, 0)); // the bench: 3 s
    write(60, stat(60, 'sshd', 1, 900, 0)); // someone else's
    mkdirSync(join(proc, 'self'));
    const roots = { api: 10, worker: 20, bench: 50 };
    const before = cpuSnapshot(roots, proc);
    assert.deepEqual([...before].map(([pid, { group, seconds }]) => `${pid} ${group} ${seconds.toFixed(2)}`).sort(), [
      '10 api 1.50',
      '11 api 4.00',
      '12 api 0.20',
      '20 worker 12.00',
      '30 postgres 100.00',
      '31 postgres 2.00',
      '40 temporal 8.00',
      '50 bench 3.00',
    ]);
    // A second later: the backend that had spent 2 s closed, a new one spent 0.5 s, the worker 1 s more.
    rmSync(join(proc, '31'), { recursive: true });
    write(32, stat(32, 'postgres', 30, 50, 0));
    writeFileSync(join(proc, '20', 'stat'), stat(20, 'node', 1, 1100, 200));
    const spent = cpuBetween(before, cpuSnapshot(roots, proc));
    assert.deepEqual(Object.fromEntries(Object.entries(spent).map(([group, seconds]) => [group, seconds.toFixed(2)])), {
      api: '0.00',
      worker: '1.00',
      temporal: '0.00',
      postgres: '0.50',
      bench: '0.00',
    });
  });

  it('waits for the machine to go quiet, and gives up after its bound', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'stat-')), 'stat');
    // Busy: 1.5 cores' worth of ticks for every moment that passes (ticks are 10 ms), until cleared.
    const since = performance.now();
    let busyTicks = 0;
    writeFileSync(file, procStatLine(busyTicks));
    const busy = setInterval(() => {
      busyTicks = Math.floor(((performance.now() - since) / 10) * 1.5);
      writeFileSync(file, procStatLine(busyTicks));
    }, 5);
    const stillBusy = await machineQuiet({ busyCores: 0.5, windowMs: 50, maxMs: 200, procStat: file });
    clearInterval(busy);
    assert.equal(stillBusy.quiet, false);
    assert.ok(stillBusy.waitedSeconds >= 0.2);
    assert.ok(stillBusy.busyCores >= 0.5, `busy ${stillBusy.busyCores}`);
    const quiet = await machineQuiet({ busyCores: 0.5, windowMs: 20, maxMs: 5_000, procStat: file });
    assert.equal(quiet.quiet, true);
    assert.equal(quiet.busyCores, 0);
    assert.equal(quiet.byGroup, undefined);
  });
});
