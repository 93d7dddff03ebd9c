import assert from 'node:assert/strict';
import fc from 'fast-check';
import { formatDuration, parseDuration } from '../../core/duration';

describe('core/duration', () => {
  const valid: Array<[string, number]> = [
    ['250ms', 250],
    ['30s', 30_000],
    ['90m', 5_400_000],
    ['36h', 129_600_000],
    ['10d', 864_000_000],
    ['0s', 0],
    [' 2m ', 120_000],
  ];
  for (const [text, ms] of valid) {
    it(`reads "${text}" as ${ms} ms`, () => assert.equal(parseDuration(text), ms));
  }

  const invalid = ['', '30', '1.5h', '-1h', '1h30m', '10 d', '10D', '3w', 'h', '1e3s', '999999999999999d'];
  for (const text of invalid) {
    it(`refuses "${text}"`, () => assert.equal(parseDuration(text), undefined));
  }

  it('formats with the largest unit that divides exactly', () => {
    assert.deepEqual([86_400_000, 129_600_000, 90_000, 1_500, 0].map(formatDuration), [
      '1d',
      '36h',
      '90s',
      '1500ms',
      '0s',
    ]);
    assert.throws(() => formatDuration(-1), RangeError);
    assert.throws(() => formatDuration(1.5), RangeError);
  });

  it('reads back whatever it formats', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 90 * 86_400_000 }), (ms) => parseDuration(formatDuration(ms)) === ms),
    );
  });
});
