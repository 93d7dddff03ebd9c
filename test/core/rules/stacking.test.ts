import assert from 'node:assert/strict';
import { stackOffers, type StackCandidate } from '../../../core/rules/stacking';

const START = new Date('2026-01-01T00:00:00Z');
const offers: StackCandidate[] = [
  { offerId: 'ofr_a', rewardMinor: 300, priority: 1, startsAt: START },
  { offerId: 'ofr_b', rewardMinor: 500, priority: 0, startsAt: START },
  { offerId: 'ofr_c', rewardMinor: 200, priority: 1, startsAt: START },
];
const outcome = (list: ReturnType<typeof stackOffers>) => list.map((o) => [o.offerId, o.appliedMinor, o.reason]);

describe('stacking (core/rules/stacking.ts)', () => {
  it('best_of applies the offer giving the most, the others lower_value', () => {
    assert.deepEqual(outcome(stackOffers(offers, { policy: 'best_of' }, 10_000)), [
      ['ofr_b', 500, 'applied'],
      ['ofr_a', 0, 'lower_value'],
      ['ofr_c', 0, 'lower_value'],
    ]);
  });

  it('priority applies the highest priority, ties to the most; a lower priority says so', () => {
    assert.deepEqual(outcome(stackOffers(offers, { policy: 'priority' }, 10_000)), [
      ['ofr_a', 300, 'applied'],
      ['ofr_c', 0, 'lower_value'],
      ['ofr_b', 0, 'lower_priority'],
    ]);
  });

  it('stack applies every offer by priority until the cap of the amount, then stack_cap', () => {
    // 8 % of 10,000 = 800: 300 + 200 fit, 500 is cut to 300.
    assert.deepEqual(outcome(stackOffers(offers, { policy: 'stack', stackCapBps: 800 }, 10_000)), [
      ['ofr_a', 300, 'applied'],
      ['ofr_c', 200, 'applied'],
      ['ofr_b', 300, 'stack_cap'],
    ]);
    assert.deepEqual(
      outcome(stackOffers(offers, { policy: 'stack', stackCapBps: 0 }, 10_000)).map((o) => o[2]),
      ['stack_cap', 'stack_cap', 'stack_cap'],
    );
  });

  it('decides ties by the earliest start, then offer id, so the same purchase always decides the same way', () => {
    const tied = [
      { offerId: 'ofr_z', rewardMinor: 100, priority: 0, startsAt: START },
      { offerId: 'ofr_y', rewardMinor: 100, priority: 0, startsAt: START },
    ];
    assert.equal(stackOffers(tied, { policy: 'best_of' }, 1_000)[0].offerId, 'ofr_y');
    assert.equal(stackOffers([...tied].reverse(), { policy: 'best_of' }, 1_000)[0].offerId, 'ofr_y');
    const earlier = { ...tied[0], startsAt: new Date(START.getTime() - 1) };
    assert.equal(stackOffers([tied[1], earlier], { policy: 'priority' }, 1_000)[0].offerId, 'ofr_z');
    assert.throws(() => stackOffers(tied, { policy: 'stack', stackCapBps: 10_001 }, 1_000), RangeError);
    assert.throws(() => stackOffers(tied, { policy: 'best_of' }, -1), RangeError);
  });
});
