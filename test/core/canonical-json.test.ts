import assert from 'node:assert/strict';
import fc from 'fast-check';
import { canonicalJson } from '../../core/canonical-json';

// The definition, written the slow and obvious way: every object's keys sorted, recursively.
// Stored ingestion fingerprints were hashed from this very text, so the fast version must
// write the same bytes for every JSON value, or re-sent events would turn into id conflicts.
function reference(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${reference((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

describe('canonicalJson', () => {
  it('writes every JSON value as the recursive sorted-keys definition does', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => canonicalJson(value) === reference(value)),
      { numRuns: 5000 },
    );
  });

  it('reads own keys only, also when one is called __proto__', () => {
    const value = JSON.parse('{"__proto__":null,"":{}}');
    assert.equal(canonicalJson(value), '{"":{},"__proto__":null}');
  });

  it('sorts integer-like keys as text, which plain objects would put first', () => {
    assert.equal(
      canonicalJson({ b: 1, 10: 'x', 9: 'y', a: { 2: true, 1: false } }),
      '{"10":"x","9":"y","a":{"1":false,"2":true},"b":1}',
    );
  });

  it('keeps a key of one object that is a value elsewhere, and keys unique to nested objects', () => {
    assert.equal(canonicalJson({ z: [{ only: 1 }, { y: 'z' }], y: 'only' }), '{"y":"only","z":[{"only":1},{"y":"z"}]}');
  });

  it('writes an ingested event in one fixed order whatever order it arrived in', () => {
    const event = { id: 'e-1', amount: 2500, currency: 'usd', createdAt: '2026-11-23T10:00:00.000Z', state: 'settled' };
    const reordered = {
      state: 'settled',
      createdAt: '2026-11-23T10:00:00.000Z',
      currency: 'usd',
      amount: 2500,
      id: 'e-1',
    };
    assert.equal(canonicalJson(reordered), canonicalJson(event));
    assert.equal(
      canonicalJson(event),
      '{"amount":2500,"createdAt":"2026-11-23T10:00:00.000Z","currency":"usd","id":"e-1","state":"settled"}',
    );
  });

  it('refuses what is nested deeper than any screened body can be', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 70; i++) deep = [deep];
    assert.throws(() => canonicalJson(deep), /nested deeper than 64/);
  });
});
