import assert from 'node:assert/strict';
import { classifyResubmission, fingerprint } from '../../../api/ingestion/fingerprint';
import type { IngestedEvent } from '../../../api/ingestion/schemas';

// Fingerprints are stored with every event and compared with every re-submission, so they
// must never change for the same content: these values were computed by the first version.
const settled = {
  id: 'evt-1',
  amount: 2500,
  currency: 'usd',
  merchantDescriptor: 'SQ *BLUE BOTTLE',
  mcc: '5814',
  createdAt: '2026-11-23T10:00:00+02:00',
  cardLast4: '4242',
  network: 'visa',
  cardholderId: 'c-1',
  cardId: 'k-1',
  authMethod: 'contactless',
  state: 'settled',
  settledAt: '2026-11-23T12:00:00Z',
  merchantId: 'mp_x',
} as IngestedEvent;
const { settledAt: _settledAt, ...authBase } = settled as IngestedEvent & { settledAt: string };
const approved = { ...authBase, state: 'approved' } as IngestedEvent;

describe('ingestion fingerprint', () => {
  it('is the same hash as ever for the same content', () => {
    assert.equal(fingerprint('settled', settled), '20d45f228b026afe1a907e30d6c6004543a1b9716aa58c4a1812a6bd8411920d');
    assert.equal(fingerprint('auth', approved), 'cb123f2a4104045ea46ce3a9f48eddcf749cef79f556439f6a9c9143021a334b');
  });

  it('ignores key order and the offset an instant is written with', () => {
    const reordered = Object.fromEntries(Object.entries(settled).reverse()) as IngestedEvent;
    assert.equal(fingerprint('settled', reordered), fingerprint('settled', settled));
    assert.equal(
      fingerprint('settled', { ...settled, createdAt: '2026-11-23T08:00:00.000Z' }),
      fingerprint('settled', settled),
    );
  });

  it("keeps an authorization's state out (its reversal is the same event) and a settlement's in", () => {
    assert.equal(
      fingerprint('auth', { ...approved, state: 'reversed' } as IngestedEvent),
      fingerprint('auth', approved),
    );
    assert.notEqual(
      fingerprint('settled', { ...settled, state: 'refunded' } as IngestedEvent),
      fingerprint('settled', settled),
    );
    assert.notEqual(fingerprint('settled', { ...settled, amount: 2501 }), fingerprint('settled', settled));
  });

  it('tells a duplicate, a reversal and a conflict apart', () => {
    const stored = { fingerprint: 'f', state: 'approved' };
    assert.equal(classifyResubmission('auth', stored, { fingerprint: 'f', state: 'approved' }), 'duplicate');
    assert.equal(classifyResubmission('auth', stored, { fingerprint: 'f', state: 'reversed' }), 'reversal');
    assert.equal(classifyResubmission('auth', stored, { fingerprint: 'g', state: 'approved' }), 'conflict');
    assert.equal(
      classifyResubmission('settled', { fingerprint: 'f', state: 'settled' }, { fingerprint: 'f', state: 'refunded' }),
      'conflict',
    );
  });
});
