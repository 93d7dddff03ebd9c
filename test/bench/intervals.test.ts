// The bench's count of purchases in flight at their busiest (bench/intervals.ts).
import assert from 'node:assert/strict';
import { maxOverlap } from '../../bench/intervals';

describe('maxOverlap', () => {
  it('counts the intervals open at the busiest instant', () => {
    assert.equal(maxOverlap([]), 0);
    assert.equal(maxOverlap([[0, 10]]), 1);
    assert.equal(
      maxOverlap([
        [0, 10],
        [5, 15],
        [6, 7],
        [12, 20],
      ]),
      3,
    );
  });

  it('frees a place that ends at the instant another starts', () => {
    assert.equal(
      maxOverlap([
        [0, 5],
        [5, 10],
        [10, 15],
      ]),
      1,
    );
  });

  it('refuses an interval that ends before it starts', () => {
    assert.throws(() => maxOverlap([[5, 4]]), RangeError);
    assert.throws(() => maxOverlap([[5, NaN]]), RangeError);
  });
});
