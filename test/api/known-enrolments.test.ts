import assert from 'node:assert/strict';
import { knownArmsOf, rememberArms } from '../../api/catalogue/known-enrolments';

const arms = (count: number, prefix: string) =>
  new Map(Array.from({ length: count }, (_, i) => [`ofr_${prefix}${i}`, i % 2 ? 'treated' : '-'] as const));

describe('known enrolments (api/catalogue/known-enrolments.ts)', () => {
  it("adds what is read to a group's arms, and keeps nothing for a group enrolled in nothing read", () => {
    assert.equal(rememberArms('chg_e0', new Map()).size, 0);
    assert.equal(knownArmsOf('chg_e0'), undefined);
    rememberArms('chg_e1', new Map([['ofr_a', 'treated']]));
    rememberArms('chg_e1', new Map([['ofr_b', 'control']]));
    assert.deepEqual(
      [...knownArmsOf('chg_e1')!],
      [
        ['ofr_a', 'treated'],
        ['ofr_b', 'control'],
      ],
    );
  });

  it('keeps about 400,000 arms, dropping the group read least recently, never the one just read', () => {
    rememberArms('chg_b1', arms(150_000, 'b1'));
    rememberArms('chg_b2', arms(150_000, 'b2'));
    // chg_b1 read again: the third group drops chg_b2, the least recently read.
    rememberArms('chg_b1', new Map());
    rememberArms('chg_b3', arms(150_000, 'b3'));
    assert.equal(knownArmsOf('chg_b2'), undefined);
    assert.equal(knownArmsOf('chg_b1')?.size, 150_000);
    assert.equal(knownArmsOf('chg_b3')?.size, 150_000);
    // One group alone over the bound is still kept: the page being read needs it.
    rememberArms('chg_b4', arms(450_000, 'b4'));
    assert.equal(knownArmsOf('chg_b4')?.size, 450_000);
    assert.equal(knownArmsOf('chg_b1'), undefined);
    assert.equal(knownArmsOf('chg_b3'), undefined);
  });
});
