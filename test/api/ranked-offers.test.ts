// The relevance order of a group's offer list (api/catalogue/ranked-offers.ts): highest score
// first, a tie by the offer's place in the held catalogue, whether the scores fit the packed
// numeric sort or take the comparison path.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { relevanceOrder } from '../../api/catalogue/ranked-offers';

/** The order as a plain comparison sort gives it. */
function byComparison(scores: number[]): number[] {
  return scores.map((_, i) => i).sort((a, b) => scores[b] - scores[a] || a - b);
}

describe('relevance order', () => {
  it('orders by score, highest first, and a tie by held index', () => {
    assert.deepEqual([...relevanceOrder(Float64Array.from([5, 9, 5, 0, 9]))], [1, 4, 0, 2, 3]);
  });

  it('agrees with a comparison sort for any scores', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 2_000_000_000 }), { maxLength: 600 }), (scores) => {
        assert.deepEqual([...relevanceOrder(Float64Array.from(scores))], byComparison(scores));
      }),
      { numRuns: 300 },
    );
  });

  it('takes the comparison path when a packed position would not be exact', () => {
    const huge = Number.MAX_SAFE_INTEGER / 2;
    const scores = [huge, 3, huge, huge - 1, 0];
    assert.deepEqual([...relevanceOrder(Float64Array.from(scores))], byComparison(scores));
  });

  it('orders nothing when there is nothing', () => {
    assert.equal(relevanceOrder(new Float64Array(0)).length, 0);
  });
});
