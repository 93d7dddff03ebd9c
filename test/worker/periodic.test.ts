// The watches' shared loop (worker/periodic.ts): turns never overlap, stop waits for the turn
// under way (up to its bound), nothing runs after stop, a wake brings the next turn forward, and a
// repeated warning is throttled.
import assert from 'node:assert/strict';
import { runPeriodically, throttled } from '../../worker/periodic';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('worker/periodic', () => {
  it('runs one turn at a time, the next only after the last has settled', async () => {
    let running = 0;
    let most = 0;
    let turns = 0;
    const loop = runPeriodically(
      async () => {
        running++;
        most = Math.max(most, running);
        await sleep(15);
        turns++;
        running--;
        if (turns === 2) throw new Error('a failing turn does not stop the loop');
      },
      { intervalMs: 1, runAtStart: true },
    );
    while (turns < 4) await sleep(5);
    await loop.stop();
    assert.equal(most, 1);
  });

  it('runs the first turn after the interval unless asked to run at start', async () => {
    let turns = 0;
    const loop = runPeriodically(async () => void turns++, { intervalMs: 60_000 });
    await sleep(10);
    await loop.stop();
    assert.equal(turns, 0);
  });

  it('runs a turn at once when woken, or right after the turn under way', async () => {
    let turns = 0;
    const loop = runPeriodically(
      async () => {
        turns++;
        await sleep(20);
      },
      { intervalMs: 60_000 },
    );
    loop.wake();
    await sleep(5);
    assert.equal(turns, 1, 'woken: the first turn did not wait the interval');
    loop.wake();
    loop.wake();
    await sleep(60);
    assert.equal(turns, 2, 'woken during a turn: one more turn right after it, not one per wake');
    await loop.stop();
    loop.wake();
    await sleep(30);
    assert.equal(turns, 2, 'stopped: a wake runs nothing');
  });

  it('stops: waits for the turn under way, and starts no other', async () => {
    let turns = 0;
    let finished = false;
    const loop = runPeriodically(
      async () => {
        turns++;
        await sleep(30);
        finished = true;
      },
      { intervalMs: 1, runAtStart: true },
    );
    await loop.stop();
    assert.ok(finished, 'stop resolved after the turn ended');
    await sleep(20);
    assert.equal(turns, 1);
  });

  it('gives up waiting for a turn that does not end after stopWaitMs', async () => {
    const loop = runPeriodically(() => new Promise<void>(() => undefined), {
      intervalMs: 1,
      runAtStart: true,
      stopWaitMs: 10,
    });
    const stopped = await Promise.race([loop.stop().then(() => 'stopped'), sleep(2_000).then(() => 'still waiting')]);
    assert.equal(stopped, 'stopped');
  });

  it('passes a warning on at most once per period', () => {
    const seen: string[] = [];
    const warn = throttled(60_000, (message: string) => seen.push(message));
    warn('first');
    warn('second');
    warn('third');
    assert.deepEqual(seen, ['first']);
  });
});
