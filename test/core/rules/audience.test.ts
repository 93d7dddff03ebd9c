import assert from 'node:assert/strict';
import { audienceProblems, decideAudience, type Audience, type AudienceFacts } from '../../../core/rules/audience';

const DAY_MS = 86_400_000;
const entryAt = new Date('2026-06-01T00:00:00.000Z');
const daysBefore = (days: number) => new Date(entryAt.getTime() - days * DAY_MS);
const facts = (over: Partial<AudienceFacts> = {}): AudienceFacts => ({
  entryAt,
  segments: [],
  lastPurchaseBeforeEntryAt: null,
  ...over,
});

describe('offer audiences (core/rules/audience)', () => {
  it('lets every group in when the offer has no audience', () => {
    assert.equal(decideAudience(null, facts()).inAudience, true);
  });

  it('takes a group carrying one of the segments, and refuses one carrying none', () => {
    const audience: Audience = { segments: ['premium', 'student'] };
    assert.equal(decideAudience(audience, facts({ segments: ['student'] })).inAudience, true);
    const refused = decideAudience(audience, facts({ segments: ['basic'] }));
    assert.equal(refused.inAudience, false);
    assert.match(refused.detail, /none of the segments premium, student/);
    assert.equal(decideAudience(audience, facts()).inAudience, false, 'a group with no segment');
  });

  it('refuses a group carrying an excluded segment, whatever else it carries', () => {
    const audience: Audience = { segments: ['premium'], excludeSegments: ['staff'] };
    const refused = decideAudience(audience, facts({ segments: ['premium', 'staff'] }));
    assert.deepEqual([refused.inAudience, refused.detail], [false, 'the group carries the excluded segment staff']);
    assert.equal(decideAudience({ excludeSegments: ['staff'] }, facts({ segments: ['x'] })).inAudience, true);
  });

  // The lookback is the 90 days before the entry: a purchase 90 days before is in it, one 91 days before is not.
  const history = (kind: 'new' | 'lapsed' | 'existing'): Audience => ({ merchantHistory: { kind, lookbackDays: 90 } });
  const table: Array<[string, Date | null, { new: boolean; lapsed: boolean; existing: boolean }]> = [
    ['never bought there', null, { new: true, lapsed: false, existing: false }],
    ['bought 91 days before', daysBefore(91), { new: true, lapsed: true, existing: false }],
    ['bought 90 days before', daysBefore(90), { new: false, lapsed: false, existing: true }],
    ['bought the instant before', new Date(entryAt.getTime() - 1), { new: false, lapsed: false, existing: true }],
  ];
  for (const [name, last, expected] of table)
    it(`decides merchant history as of the entry for a group that ${name}`, () => {
      for (const kind of ['new', 'lapsed', 'existing'] as const)
        assert.equal(
          decideAudience(history(kind), facts({ lastPurchaseBeforeEntryAt: last })).inAudience,
          expected[kind],
          kind,
        );
    });

  it('asks the segments before the history: both must hold', () => {
    const audience: Audience = { segments: ['premium'], merchantHistory: { kind: 'existing', lookbackDays: 30 } };
    assert.equal(
      decideAudience(audience, facts({ segments: ['premium'], lastPurchaseBeforeEntryAt: daysBefore(1) })).inAudience,
      true,
    );
    assert.equal(decideAudience(audience, facts({ segments: ['premium'] })).inAudience, false);
    assert.equal(decideAudience(audience, facts({ lastPurchaseBeforeEntryAt: daysBefore(1) })).inAudience, false);
  });

  it('refuses facts that cannot be: a lookback out of range, a purchase at or after the entry', () => {
    assert.throws(() => decideAudience({ merchantHistory: { kind: 'new', lookbackDays: 0 } }, facts()), RangeError);
    assert.throws(() => decideAudience({ merchantHistory: { kind: 'new', lookbackDays: 731 } }, facts()), RangeError);
    assert.throws(
      () => decideAudience(history('existing'), facts({ lastPurchaseBeforeEntryAt: entryAt })),
      /before the entry/,
    );
  });

  it('names each bad segment of an audience and a segment both included and excluded', () => {
    assert.deepEqual(audienceProblems({ segments: ['ok', 'Not OK'], excludeSegments: ['ok'] }), [
      { path: '/audience/segments/1', message: 'must match ^[a-z0-9_-]{1,40}$' },
      { path: '/audience/excludeSegments', message: 'names ok, which segments includes' },
    ]);
    assert.deepEqual(audienceProblems({ segments: ['a'], merchantHistory: { kind: 'new', lookbackDays: 30 } }), []);
  });
});
