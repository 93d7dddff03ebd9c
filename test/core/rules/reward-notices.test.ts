import assert from 'node:assert/strict';
import { normaliseLeadDays, planNotices, type GrantNoticeState } from '../../../core/rules/reward-notices';

const DAY = 86_400_000;
const t0 = Date.parse('2026-01-01T00:00:00Z');
const at = (days: number) => new Date(t0 + days * DAY);
// Earned at day 0, spendable at day 3, expires at day 90.
const grant = (over: Partial<GrantNoticeState> = {}): GrantNoticeState => ({
  availableAt: at(3),
  expiresAt: at(90),
  remainingMinor: 75,
  availableNoticed: false,
  expiryNoticedDays: null,
  ...over,
});

describe('core/rules/reward-notices', () => {
  it('waits for availability, then sends reward_available once and plans the first lead time', () => {
    assert.deepEqual(planNotices(grant(), [30, 7], at(1)).nextNoticeAt, at(3));
    assert.deepEqual(planNotices(grant(), [30, 7], at(1)).notices, []);
    const plan = planNotices(grant(), [30, 7], at(3));
    assert.deepEqual(plan.notices, [{ type: 'reward_available' }]);
    assert.equal(plan.availableNoticed, true);
    assert.deepEqual(plan.nextNoticeAt, at(60));
    assert.deepEqual(planNotices(grant({ availableNoticed: true }), [30, 7], at(4)).notices, []);
  });

  it('sends each lead time once, in turn, and nothing after the last', () => {
    const first = planNotices(grant({ availableNoticed: true }), [30, 7], at(60));
    assert.deepEqual(first.notices, [{ type: 'reward_expiring', daysBeforeExpiry: 30 }]);
    assert.deepEqual(first.nextNoticeAt, at(83));
    const again = planNotices(grant({ availableNoticed: true, expiryNoticedDays: 30 }), [30, 7], at(70));
    assert.deepEqual(again.notices, [], 'the 30-day notice is not sent twice');
    const second = planNotices(grant({ availableNoticed: true, expiryNoticedDays: 30 }), [30, 7], at(83));
    assert.deepEqual(second.notices, [{ type: 'reward_expiring', daysBeforeExpiry: 7 }]);
    assert.equal(second.nextNoticeAt, null);
  });

  it('sends only the smallest of several lead times passed at once', () => {
    const plan = planNotices(grant(), [30, 7], at(85));
    assert.deepEqual(plan.notices, [{ type: 'reward_available' }, { type: 'reward_expiring', daysBeforeExpiry: 7 }]);
    assert.equal(plan.expiryNoticedDays, 7);
    assert.equal(plan.nextNoticeAt, null);
  });

  it('sends nothing for a grant spent or expired, or with no lead times', () => {
    assert.deepEqual(planNotices(grant({ remainingMinor: 0 }), [30, 7], at(10)).notices, []);
    assert.equal(planNotices(grant({ remainingMinor: 0 }), [30, 7], at(10)).nextNoticeAt, null);
    assert.deepEqual(planNotices(grant(), [30, 7], at(90)).notices, []);
    const none = planNotices(grant(), [], at(80));
    assert.deepEqual(none.notices, [{ type: 'reward_available' }]);
    assert.equal(none.nextNoticeAt, null);
  });

  it('plans a lead time added later that is still ahead, and skips one already behind', () => {
    const plan = planNotices(grant({ availableNoticed: true, expiryNoticedDays: 30 }), [60, 30, 14, 7], at(70));
    assert.deepEqual(plan.notices, []);
    assert.deepEqual(plan.nextNoticeAt, at(76));
  });

  it('normalises lead times: distinct positive whole days, largest first', () => {
    assert.deepEqual(normaliseLeadDays([7, 30, 7, 0, -1, 1.5]), [30, 7]);
  });
});
