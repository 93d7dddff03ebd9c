import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { generateKeyRingEntry, KeyRing, parseKeyRing, UnknownKeyError } from '../../../core/crypto/key-ring';

describe('core/crypto/key-ring', () => {
  const k1 = randomBytes(32).toString('base64');
  const k2 = randomBytes(32).toString('base64');

  it('reads id:base64 entries: the first seals, all open', () => {
    const { ring, problems } = parseKeyRing('KEYS', ` k2:${k2} , k1:${k1}`);
    assert.deepEqual(problems, []);
    assert.equal(ring!.primaryKeyId, 'k2');
    assert.deepEqual(ring!.keyIds, ['k2', 'k1']);
    assert.equal(ring!.primaryKey.toString('base64'), k2);
    assert.equal(ring!.key('k1').toString('base64'), k1);
  });

  it('names an unknown key id, and the ids it has', () => {
    const ring = parseKeyRing('KEYS', `k1:${k1}`).ring!;
    assert.throws(
      () => ring.key('k0'),
      (err: Error) =>
        err instanceof UnknownKeyError && /key id "k0" is not among the configured keys \(k1\)/.test(err.message),
    );
  });

  it('reports every bad entry without ever quoting a key', () => {
    const short = randomBytes(16).toString('base64');
    const { ring, problems } = parseKeyRing(
      'KEYS',
      [
        `k1:${k1}`,
        `k1:${k2}`,
        `bad id:${k1}`,
        `k3:${short}`,
        'k4',
        `k5:${k1.slice(0, -1)}`,
        `-x:${k1}`,
        `k6:${k1.replace(/=$/, '')}`,
      ].join(','),
    );
    assert.equal(ring, undefined);
    assert.equal(problems.length, 7, problems.join('\n'));
    assert.match(problems[0], /KEYS entry 2: key id "k1" is listed twice/);
    assert.match(problems[1], /KEYS entry 3 must be <id>:<base64 key>/);
    assert.match(problems[2], /KEYS entry 4 \(id "k3"\) must hold 32 random bytes/);
    for (const p of problems) for (const secret of [k1, k2, short, k1.slice(0, -1)]) assert.ok(!p.includes(secret), p);
  });

  it('keeps the key bytes out of JSON and util.inspect', () => {
    const ring = parseKeyRing('KEYS', `k1:${k1},k2:${k2}`).ring!;
    for (const shown of [
      JSON.stringify({ ring }),
      inspect(ring),
      inspect({ config: { ring } }, { depth: 5, showHidden: true }),
    ]) {
      assert.ok(!shown.includes(k1) && !shown.includes(k2), shown);
      assert.ok(!shown.includes(Buffer.from(k1, 'base64').toString('hex')), shown);
    }
    assert.deepEqual(JSON.parse(JSON.stringify(ring)), { primaryKeyId: 'k1', keyIds: ['k1', 'k2'] });
  });

  it('generates entries it reads back', () => {
    const entry = generateKeyRingEntry('dev1');
    assert.match(entry, /^dev1:[A-Za-z0-9+/]{43}=$/);
    assert.equal(parseKeyRing('KEYS', entry).ring!.primaryKeyId, 'dev1');
    assert.notEqual(generateKeyRingEntry('dev1'), entry);
    assert.throws(() => generateKeyRingEntry('no spaces'));
  });

  it('refuses an empty ring and keys of the wrong size when built directly', () => {
    assert.throws(() => new KeyRing([]));
    assert.throws(() => new KeyRing([{ id: 'a', key: randomBytes(31) }]), /31 bytes/);
    assert.throws(
      () =>
        new KeyRing([
          { id: 'a', key: randomBytes(32) },
          { id: 'a', key: randomBytes(32) },
        ]),
      /twice/,
    );
  });
});
