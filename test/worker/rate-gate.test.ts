import assert from 'node:assert/strict';
import { RateGate } from '../../worker/rate-gate';

describe('RateGate (per-endpoint pacing of the relay)', () => {
  it('lets a rate through per second, then says how long until the next token', () => {
    let now = 0;
    const gate = new RateGate(() => now);
    assert.deepEqual(
      [1, 2, 3].map(() => gate.take('whe_a', 3)),
      [0, 0, 0],
      'a full bucket holds one second',
    );
    assert.equal(gate.take('whe_a', 3), 334, 'the fourth waits a third of a second');
    now = 334;
    assert.equal(gate.take('whe_a', 3), 0);
    assert.ok(gate.take('whe_a', 3) > 0);
  });

  it('keeps endpoints apart and never holds back an endpoint without a rate', () => {
    const now = 0;
    const gate = new RateGate(() => now);
    assert.equal(gate.take('whe_slow', 1), 0);
    assert.ok(gate.take('whe_slow', 1) > 0);
    assert.equal(gate.take('whe_other', 1), 0, "another endpoint's bucket is its own");
    for (let i = 0; i < 1000; i++) assert.equal(gate.take('whe_free', null), 0);
  });

  it('never banks more than one second of tokens after a quiet spell', () => {
    let now = 0;
    const gate = new RateGate(() => now);
    gate.take('whe_a', 2);
    now = 60_000;
    assert.deepEqual([gate.take('whe_a', 2), gate.take('whe_a', 2)], [0, 0]);
    assert.ok(gate.take('whe_a', 2) > 0, 'a minute of silence is not a burst of 120');
  });
});
