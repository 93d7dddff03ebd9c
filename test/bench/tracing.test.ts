// The tracing phase's arithmetic (bench/tracing.ts): the CPU of a process tree read from /proc,
// and the traced share of throughput and of CPU per purchase over alternated rounds.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  machineCpuSeconds,
  processTreeCpuSeconds,
  roundOrder,
  tracingShares,
  type TracingDrain,
} from '../../bench/tracing';

/** A /proc stat line: pid, (comm), state, ppid, then fields up to utime (14th) and stime (15th). */
function stat(pid: number, comm: string, ppid: number, utime: number, stime: number): string {
  return `${pid} (${comm}) S ${ppid} ${pid} ${pid} 0 -1 4194560 100 0 0 0 ${utime} ${stime} 0 0 20 0 1 0`;
}

describe('bench tracing phase figures', () => {
  it('sums the CPU of the given processes and all their descendants, not of others', () => {
    const proc = mkdtempSync(join(tmpdir(), 'proc-'));
    const write = (pid: number, line: string) => {
      mkdirSync(join(proc, String(pid)));
      writeFileSync(join(proc, String(pid), 'stat'), line);
    };
    write(10, stat(10, 'node api', 1, 100, 50)); // the API's primary: 1.5 s
    write(11, stat(11, 'node (cluster) x', 10, 300, 100)); // its worker, spaces and ) in the name: 4 s
    write(12, stat(12, 'sh', 11, 20, 0)); // a grandchild: 0.2 s
    write(20, stat(20, 'node worker', 1, 1000, 200)); // the Temporal worker: 12 s
    write(30, stat(30, 'postgres', 1, 5000, 5000)); // not ours
    mkdirSync(join(proc, 'self'));
    assert.equal(processTreeCpuSeconds([10, 20], proc).toFixed(2), '17.70');
    assert.equal(processTreeCpuSeconds([20], proc).toFixed(2), '12.00');
  });

  it('alternates which side drains first, round after round', () => {
    assert.deepEqual([1, 2, 3].map(roundOrder), [
      ['untraced', 'traced'],
      ['traced', 'untraced'],
      ['untraced', 'traced'],
    ]);
  });

  it("reads the machine's busy CPU seconds from /proc/stat, idle and iowait left out", () => {
    const file = join(mkdtempSync(join(tmpdir(), 'stat-')), 'stat');
    writeFileSync(file, 'cpu  1000 10 300 9000 500 20 30 40 0 0\ncpu0 500 5 150 4500 250 10 15 20 0 0\n');
    assert.equal(machineCpuSeconds(file), 14);
  });

  it('compares the mean rates and the CPU per purchase of the traced and the untraced drains', () => {
    const drain = (steadyPerSecond: number, completed: number, serviceCpuSeconds: number): TracingDrain => ({
      offered: completed,
      completed,
      steadyPerSecond,
      overallPerSecond: steadyPerSecond,
      seconds: completed / steadyPerSecond,
      serviceCpuSeconds,
      apiCpuSeconds: serviceCpuSeconds / 4,
      machineCpuSeconds: serviceCpuSeconds * 2 + 10,
    });
    const shares = tracingShares([
      { untraced: drain(40, 1000, 20), traced: drain(38, 1000, 22) },
      { untraced: drain(30, 1000, 20), traced: drain(32, 1000, 22) },
    ]);
    assert.equal(shares.throughputPct.toFixed(1), '100.0');
    assert.equal(shares.cpuPct.toFixed(1), '110.0');
    assert.equal(shares.machineCpuPct.toFixed(1), '108.0');
  });
});
