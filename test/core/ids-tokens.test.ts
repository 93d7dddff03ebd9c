import assert from 'node:assert/strict';
import { newId, isId, ID_PREFIXES, uuidV7 } from '../../core/ids';
import {
  generateOperatorToken,
  generateToken,
  hashToken,
  isWellFormedOperatorToken,
  isWellFormedToken,
  safeEqualHex,
} from '../../core/tokens';

describe('core/ids', () => {
  it('makes ids of every prefix that its own check accepts', () => {
    for (const prefix of ID_PREFIXES) {
      const id = newId(prefix);
      assert.ok(isId(prefix, id), id);
      assert.match(id, new RegExp(`^${prefix}_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`));
    }
  });

  it('writes the creation time in the first 48 bits (version 7), so later ids sort after earlier ones', () => {
    const at = Date.UTC(2026, 10, 24, 1, 2, 3, 456);
    const id = uuidV7(at);
    assert.equal(parseInt(id.slice(0, 8) + id.slice(9, 13), 16), at);
    assert.equal(uuidV7(0).slice(0, 13), '00000000-0000');
    assert.equal(uuidV7(2 ** 48 - 1).slice(0, 13), 'ffffffff-ffff');
    const earlier = Array.from({ length: 50 }, () => uuidV7(at));
    const later = Array.from({ length: 50 }, () => uuidV7(at + 1));
    assert.ok(earlier.every((e) => later.every((l) => e < l)));
  });

  it('keeps 74 random bits: 100,000 ids of one millisecond are all different', () => {
    const ids = new Set(Array.from({ length: 100_000 }, () => uuidV7(1_800_000_000_000)));
    assert.equal(ids.size, 100_000);
  });

  it('rejects ids of another prefix, uppercase, padding and non-strings', () => {
    const id = newId('chg');
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

  it('generates operator tokens of their own prefix, never taken for an issuer token nor the reverse', () => {
    const operator = generateOperatorToken();
    assert.match(operator, /^rwd_op_[A-Za-z0-9_-]{43}$/);
    assert.ok(isWellFormedOperatorToken(operator));
    assert.ok(!isWellFormedToken(operator));
    assert.ok(!isWellFormedOperatorToken(generateToken()));
    assert.notEqual(generateOperatorToken(), operator);
  });

  it('hashes deterministically and compares hashes in constant time', () => {
    const t = generateToken();
    assert.equal(hashToken(t), hashToken(t));
    assert.ok(safeEqualHex(hashToken(t), hashToken(t)));
    assert.ok(!safeEqualHex(hashToken(t), hashToken(generateToken())));
    assert.ok(!safeEqualHex(hashToken(t), 'abcd'));
  });
});
