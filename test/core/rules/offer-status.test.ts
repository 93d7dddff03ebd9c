import assert from 'node:assert/strict';
import { offerStatusAt } from '../../../core/rules/offer-status';

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
