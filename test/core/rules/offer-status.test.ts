import assert from 'node:assert/strict';
import fc from 'fast-check';
import { offerStatusAt, statusSpanOf } from '../../../core/rules/offer-status';

describe('offerStatusAt', () => {
  const startsAt = new Date('2026-01-01T00:00:00Z');
  const endsAt = new Date('2026-02-01T00:00:00Z');
  const offer = { startsAt, endsAt, catalogueStatus: 'active' as const };

  it('is scheduled before the start', () =>
    assert.equal(offerStatusAt(offer, new Date('2025-12-31T23:59:59Z')), 'scheduled'));
  it('is active from the start instant', () => assert.equal(offerStatusAt(offer, startsAt), 'active'));
  it('is ended from the end instant (half-open window)', () => assert.equal(offerStatusAt(offer, endsAt), 'ended'));
  it('is active forever without an end', () =>
    assert.equal(offerStatusAt({ ...offer, endsAt: null }, new Date('2099-01-01Z')), 'active'));
  it('is ended when deactivated in the catalogue, even inside its window', () => {
    assert.equal(offerStatusAt({ ...offer, catalogueStatus: 'inactive' }, new Date('2026-01-15Z')), 'ended');
    assert.equal(offerStatusAt({ ...offer, catalogueStatus: 'inactive' }, new Date('2025-01-15Z')), 'ended');
  });
});

describe('statusSpanOf', () => {
  const at = new Date('2026-01-15T00:00:00Z');
  const ms = (iso: string) => new Date(iso).getTime();

  it('runs from the nearest edge at or before the instant to the nearest after it', () => {
    const windows = [
      { startsAt: new Date('2026-01-01Z'), endsAt: new Date('2026-02-01Z') },
      { startsAt: new Date('2026-01-10Z'), endsAt: null },
      { startsAt: new Date('2026-01-20Z'), endsAt: new Date('2026-03-01Z') },
    ];
    assert.deepEqual(statusSpanOf(windows, at), { fromMs: ms('2026-01-10Z'), untilMs: ms('2026-01-20Z') });
  });

  it('starts at an edge falling on the instant itself (a window is half-open)', () =>
    assert.deepEqual(statusSpanOf([{ startsAt: at, endsAt: null }], at), { fromMs: at.getTime(), untilMs: Infinity }));

  it('is unbounded without edges', () =>
    assert.deepEqual(statusSpanOf([], at), { fromMs: -Infinity, untilMs: Infinity }));

  it('keeps every status as it is at the instant over the whole span', () => {
    const day = 86_400_000;
    const window = fc
      .record({ start: fc.integer({ min: -20, max: 20 }), length: fc.option(fc.integer({ min: 1, max: 20 })) })
      .map(({ start, length }) => ({
        startsAt: new Date(at.getTime() + start * day),
        endsAt: length === null ? null : new Date(at.getTime() + (start + length) * day),
        catalogueStatus: 'active' as const,
      }));
    fc.assert(
      fc.property(
        fc.array(window, { maxLength: 8 }),
        fc.integer({ min: -30 * day, max: 30 * day }),
        (windows, shift) => {
          const { fromMs, untilMs } = statusSpanOf(windows, at);
          const t = at.getTime() + shift;
          const inside = t >= fromMs && t < untilMs;
          const same = windows.every((w) => offerStatusAt(w, new Date(t)) === offerStatusAt(w, at));
          if (inside) assert.ok(same);
        },
      ),
    );
  });
});
