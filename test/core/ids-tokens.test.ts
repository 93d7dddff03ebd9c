import assert from 'node:assert/strict';
import { newId, isId, ID_PREFIXES } from '../../core/ids';
import { generateToken, hashToken, isWellFormedToken, safeEqualHex } from '../../core/tokens';

describe('core/ids', () => {
  it('makes ids of every prefix that its own check accepts', () => {
    for (const prefix of ID_PREFIXES) {
      const id = newId(prefix);
      assert.ok(isId(prefix, id), id);
      assert.match(id, new RegExp(`^${prefix}_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`));
    }
  });

  it('rejects ids of another prefix, uppercase, padding and non-strings', () => {
    const id = newId('chg');
    // Computed before the assertions: assert.ok(!isId(...)) narrows `id` to never.
    const upper = id.toUpperCase();
    assert.ok(!isId('ch', id));
    assert.ok(!isId('chg', upper));
    assert.ok(!isId('chg', ` ${id}`));
    assert.ok(!isId('chg', `${id}\n`));
    assert.ok(!isId('chg', 42));
  });
});

describe('core/tokens', () => {
  it('generates 256-bit tokens in the documented format, unique each time', () => {
    const tokens = new Set(Array.from({ length: 100 }, generateToken));
    assert.equal(tokens.size, 100);
    for (const t of tokens) assert.ok(isWellFormedToken(t));
    assert.equal(Buffer.from([...tokens][0].slice('rwd_sk_'.length), 'base64url').length, 32);
  });

  it('hashes deterministically and compares hashes in constant time', () => {
    const t = generateToken();
    assert.equal(hashToken(t), hashToken(t));
    assert.ok(safeEqualHex(hashToken(t), hashToken(t)));
    assert.ok(!safeEqualHex(hashToken(t), hashToken(generateToken())));
    assert.ok(!safeEqualHex(hashToken(t), 'abcd'));
  });
});
