import assert from 'node:assert/strict';
import { hash } from 'node:crypto';
import fc from 'fast-check';
import { canonicalJson } from '../../../core/canonical-json';
import { toInstant } from '../../../core/timestamp';
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

  it('writes the same text as canonicalJson of the content, whatever the keys and values', () => {
    // The definition: the event without an authorization's state, createdAt as an instant,
    // hashed as canonical JSON. The fast path must agree with it on anything, including keys
    // JSON.stringify orders first (integer-like) and nested values.
    const reference = (kind: 'auth' | 'settled', event: Record<string, unknown>) => {
      const { state, createdAt, ...rest } = event;
      const content: Record<string, unknown> = { ...rest, createdAt: toInstant(createdAt as string).toISOString() };
      if (kind === 'settled') content.state = state;
      return hash('sha256', canonicalJson(content), 'hex');
    };
    const key = fc.oneof(
      fc.constantFrom('amount', 'currency', 'mcc', 'Zeta', 'a', '_x', '10', '2', '01', 'é'),
      fc.string({ maxLength: 4 }),
    );
    const scalar = fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.boolean(), fc.constant(null));
    const value = fc.oneof(
      scalar,
      scalar,
      fc.dictionary(key, scalar, { maxKeys: 3 }),
      fc.array(scalar, { maxLength: 3 }),
    );
    fc.assert(
      fc.property(
        fc.constantFrom('auth' as const, 'settled' as const),
        fc.dictionary(key, value, { maxKeys: 8 }),
        fc.constantFrom('approved', 'settled'),
        (kind, extra, state) => {
          // No "__proto__": request bodies cannot hold it (api/middleware/json-body.ts).
          delete (extra as Record<string, unknown>)['__proto__'];
          const event = { ...extra, id: 'e-1', state, createdAt: '2026-11-23T10:00:00+02:00' };
          assert.equal(fingerprint(kind, event as unknown as IngestedEvent), reference(kind, event));
        },
      ),
      { numRuns: 500 },
    );
  });
});
