import assert from 'node:assert/strict';
import { holdoutArm, holdoutBucket, HOLDOUT_BUCKETS } from '../../../core/rules/holdout';

// Ids shaped like the service's (a prefix and a UUID), counted in the last 48 bits so that every
// run hashes the same ones.
const id = (prefix: 'ofr' | 'chg', n: number) =>
  `${prefix}_0192a0b0-0000-7000-8000-${n.toString(16).padStart(12, '0')}`;
const OFFER = id('ofr', 1);
const OTHER_OFFER = id('ofr', 2);
const GROUPS = 100_000;

const computed = new Map<string, number[]>();
const bucketsOf = (offerId: string): number[] => {
  let buckets = computed.get(offerId);
  if (!buckets) {
    buckets = Array.from({ length: GROUPS }, (_, i) => holdoutBucket(offerId, id('chg', i + 1)));
    computed.set(offerId, buckets);
  }
  return buckets;
};

describe('holdoutBucket and holdoutArm', () => {
  // Computed apart from this code (Python's hashlib: the first 4 bytes of
  // sha256(b"holdout:<offer>:<group>") big-endian, times 10000, shifted right by 32). A change of
  // hash, string or scaling moves groups between arms of offers already running: it fails here.
  const fixed: Array<[offer: string, group: string, bucket: number, at1000: string, at5000: string]> = [
    [OFFER, id('chg', 3), 239, 'control', 'control'],
    [OFFER, id('chg', 16), 517, 'control', 'control'],
    [OFFER, id('chg', 45), 791, 'control', 'control'],
    [OFFER, id('chg', 44), 985, 'control', 'control'],
    [OFFER, id('chg', 40), 1368, 'treated', 'control'],
    [OFFER, id('chg', 1), 3802, 'treated', 'control'],
    [OFFER, id('chg', 20), 4716, 'treated', 'control'],
    [OFFER, id('chg', 51), 5013, 'treated', 'treated'],
    [OFFER, id('chg', 10), 8925, 'treated', 'treated'],
    [OFFER, id('chg', 25), 9988, 'treated', 'treated'],
    [OTHER_OFFER, id('chg', 10), 9265, 'treated', 'treated'],
    [OTHER_OFFER, id('chg', 11), 7661, 'treated', 'treated'],
    [OTHER_OFFER, id('chg', 12), 3796, 'treated', 'control'],
  ];
  for (const [offer, group, bucket, at1000, at5000] of fixed) {
    it(`puts ${offer.slice(-2)}/${group.slice(-2)} in bucket ${bucket}: ${at1000} at 1000 bps, ${at5000} at 5000`, () => {
      for (let i = 0; i < 3; i++) assert.equal(holdoutBucket(offer, group), bucket);
      assert.equal(holdoutArm(offer, group, 1000), at1000);
      assert.equal(holdoutArm(offer, group, 5000), at5000);
      assert.equal(holdoutArm(offer, group, 0), 'treated');
      if (bucket < 5000) {
        // The bound is exclusive: a holdout of exactly the bucket leaves the group treated.
        assert.equal(holdoutArm(offer, group, bucket), 'treated');
        assert.equal(holdoutArm(offer, group, bucket + 1), 'control');
      }
    });
  }

  it('splits 100,000 groups within 0.2 percentage points of holdoutBps, none at 0', function () {
    this.timeout(10_000);
    const buckets = bucketsOf(OFFER);
    for (const holdoutBps of [0, 500, 1000, 2500, 5000]) {
      const control = buckets.filter((b) => b < holdoutBps).length;
      const shareBps = (control * 10_000) / GROUPS;
      assert.ok(Math.abs(shareBps - holdoutBps) <= 20, `${holdoutBps} bps gave ${control} controls`);
    }
    assert.equal(buckets.filter((b) => b < 0).length, 0);
    assert.ok(buckets.every((b) => Number.isInteger(b) && b >= 0 && b < HOLDOUT_BUCKETS));
    // Uniform over the buckets, not only at the thresholds above: a chi-square over 100 bins of
    // 100 buckets stays under its 0.999 quantile at 99 degrees of freedom.
    const bins = new Array<number>(100).fill(0);
    for (const b of buckets) bins[Math.floor(b / 100)] += 1;
    const chiSquare = bins.reduce((sum, n) => sum + (n - GROUPS / 100) ** 2 / (GROUPS / 100), 0);
    assert.ok(chiSquare < 148.2, `chi-square ${chiSquare.toFixed(1)}`);
  });

  it('splits the same groups independently for two offers', function () {
    this.timeout(10_000);
    const first = bucketsOf(OFFER);
    const second = bucketsOf(OTHER_OFFER);
    let both = 0;
    let firstOnly = 0;
    for (let i = 0; i < GROUPS; i++) {
      if (first[i] < 1000 && second[i] < 1000) both += 1;
      else if (first[i] < 1000) firstOnly += 1;
    }
    // Independent arms at 10 % each: 1 % of groups in both controls (a standard deviation of
    // 0.03 percentage points at this size), and a control of the first offer no likelier than
    // any group to be in the second's.
    assert.ok(Math.abs(both / GROUPS - 0.01) <= 0.001, `${both} groups in both controls`);
    assert.ok(Math.abs(both / (both + firstOnly) - 0.1) <= 0.01, `${both} of ${both + firstOnly}`);
  });

  it('nests arms: a larger holdout only adds controls', () => {
    for (let i = 1; i <= 2_000; i++) {
      const group = id('chg', i);
      let wasControl = false;
      for (const holdoutBps of [0, 100, 1000, 2500, 5000]) {
        const control = holdoutArm(OFFER, group, holdoutBps) === 'control';
        assert.ok(control || !wasControl, `${group} left the control at ${holdoutBps} bps`);
        wasControl = control;
      }
    }
  });

  it('refuses holdouts outside 0..5000 bps and ids that would blur the pair', () => {
    for (const bad of [-1, 5001, 10_000, 0.5, Number.NaN]) {
      assert.throws(() => holdoutArm(OFFER, id('chg', 1), bad), RangeError, String(bad));
    }
    // "a:b" + "c" and "a" + "b:c" would hash the same string.
    assert.throws(() => holdoutBucket('ofr_a:b', 'c'), RangeError);
    assert.throws(() => holdoutBucket('ofr_a', 'b:c'), RangeError);
    assert.throws(() => holdoutBucket('', id('chg', 1)), RangeError);
    assert.throws(() => holdoutBucket(OFFER, ''), RangeError);
  });
});
