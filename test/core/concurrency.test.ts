import assert from 'node:assert/strict';
import { mapLimited } from '../../core/concurrency';

describe('mapLimited', () => {
  it('keeps the order of results and never runs more than the limit at once', async () => {
    let running = 0;
    let peak = 0;
    const results = await mapLimited([5, 1, 4, 2, 3, 0, 6], 3, async (ms, i) => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, ms));
      running--;
      return `${i}:${ms}`;
    });
    assert.deepEqual(results, ['0:5', '1:1', '2:4', '3:2', '4:3', '5:0', '6:6']);
    assert.equal(peak, 3);
  });

  it('handles an empty list and refuses a limit below 1', async () => {
    assert.deepEqual(await mapLimited([], 4, async () => 1), []);
    await assert.rejects(
      mapLimited([1], 0, async () => 1),
      /positive integer/,
    );
  });
});
