import assert from 'node:assert/strict';
import { awaitsProcessing } from '../../../core/domain/handover';

// What the sweeper hands over again from the queue, and what it only dequeues.
describe('core/domain/handover awaitsProcessing', () => {
  const cases: Array<[kind: string, state: string, rewardStatus: string, waits: boolean]> = [
    ['settled', 'settled', 'pending', true],
    ['auth', 'approved', 'pending', true],
    ['settled', 'refunded', 'pending', true],
    // A reversal recorded after its authorization was previewed (or found no offer) still has
    // to reach the workflow, which closes the preview.
    ['auth', 'reversed', 'previewed', true],
    ['auth', 'reversed', 'not_matched', true],
    ['auth', 'reversed', 'voided', false],
    ['auth', 'reversed', 'lapsed', false],
    ['auth', 'approved', 'previewed', false],
    ['settled', 'settled', 'matched', false],
    ['settled', 'settled', 'not_matched', false],
    ['settled', 'refunded', 'reversed', false],
  ];
  for (const [kind, state, rewardStatus, waits] of cases) {
    it(`${waits ? 'hands over' : 'only dequeues'} a ${state} ${kind} event that is ${rewardStatus}`, () => {
      assert.equal(awaitsProcessing({ kind, state, rewardStatus }), waits);
    });
  }
});
