import assert from 'node:assert/strict';
import { canonicalJson } from '../../core/canonical-json';
import { isValidIdempotencyKey, requestHash, seal, unseal } from '../../core/idempotency';

describe('core/idempotency', () => {
  it('accepts 1 to 255 visible ASCII characters as a key, nothing else', () => {
    for (const key of ['a', '~'.repeat(255), 'order-42/retry:1', '"quoted"', '{}'])
      assert.ok(isValidIdempotencyKey(key), key);
    for (const key of ['', 'x'.repeat(256), 'a b', 'tab\t', 'line\n', 'é', '\u0000', 'a\u007f'])
      assert.ok(!isValidIdempotencyKey(key), JSON.stringify(key));
  });

  it('writes JSON with sorted keys at every depth, arrays in their order', () => {
    assert.equal(
      canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } }),
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
    assert.equal(canonicalJson(undefined), 'null');
    assert.equal(canonicalJson([2, 1]), '[2,1]');
  });

  it('fingerprints the same request alike and another one differently', () => {
    const hash = requestHash({ query: {}, body: { url: 'https://x', enabledTypes: ['a'] } });
    assert.match(hash, /^[0-9a-f]{64}$/);
    assert.equal(requestHash({ query: {}, body: { enabledTypes: ['a'], url: 'https://x' } }), hash);
    assert.notEqual(requestHash({ query: {}, body: { enabledTypes: ['a'], url: 'https://y' } }), hash);
    assert.notEqual(requestHash({ query: { a: '1' }, body: { enabledTypes: ['a'], url: 'https://x' } }), hash);
    assert.equal(requestHash({ query: {}, body: undefined }), requestHash({ query: {}, body: null }));
  });

  it('seals an answer that only the same secret and row can open', () => {
    const sealed = seal('rwd_sk_secret', 'row-1', '{"signingSecret":"whsec_abc"}');
    assert.ok(!sealed.toString('latin1').includes('whsec_abc'));
    assert.equal(unseal('rwd_sk_secret', 'row-1', sealed), '{"signingSecret":"whsec_abc"}');
    assert.notDeepEqual(
      seal('rwd_sk_secret', 'row-1', 'same'),
      seal('rwd_sk_secret', 'row-1', 'same'),
      'a fresh IV each time',
    );
    assert.throws(() => unseal('rwd_sk_other', 'row-1', sealed));
    assert.throws(() => unseal('rwd_sk_secret', 'row-2', sealed));
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1] ^= 1;
    assert.throws(() => unseal('rwd_sk_secret', 'row-1', tampered));
    assert.throws(() => unseal('rwd_sk_secret', 'row-1', sealed.subarray(0, 20)));
  });
});
