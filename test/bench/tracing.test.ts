// The tracing phase's arithmetic (bench/tracing.ts): a drain's CPU per purchase by group, the
// rounds' order, and the traced share of throughput and of CPU per purchase over the rounds.
import assert from 'node:assert/strict';
import { cpuPerPurchase, roundOrder, tracingShares, type TracingDrain } from '../../bench/tracing';

describe('bench tracing phase figures', () => {
  it("tells a drain's CPU per purchase by group, and what the machine spent beyond them", () => {
    const line = cpuPerPurchase({
      offered: 1000,
      completed: 1000,
      steadyPerSecond: 40,
      overallPerSecond: 40,
      seconds: 25,
      serviceCpuSeconds: 18,
      apiCpuSeconds: 3,
      machineCpuSeconds: 50,
      cpuSeconds: { api: 3, worker: 15, temporal: 20, postgres: 8, bench: 2 },
    });
    assert.equal(
      line,
      'CPU ms per purchase: api 3.0, worker 15.0, temporal 20.0, postgres 8.0, bench 2.0, rest 2.0, machine 50.0',
    );
  });

  it('alternates which side drains first, round after round', () => {
    assert.deepEqual([1, 2, 3].map(roundOrder), [
      ['untraced', 'traced'],
      ['traced', 'untraced'],
      ['untraced', 'traced'],
    ]);
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
      cpuSeconds: {
        api: serviceCpuSeconds / 4,
        worker: (serviceCpuSeconds * 3) / 4,
        temporal: 6,
        postgres: 3,
        bench: 1,
      },
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
