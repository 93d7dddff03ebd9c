import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { openBox, sealBox, SEALED_BOX_OVERHEAD_BYTES } from '../../../core/crypto/sealed-box';

describe('core/crypto/sealed-box', () => {
  const key = randomBytes(32);
  const plaintext = `whsec_${randomBytes(32).toString('base64')}`;

  it('opens what it sealed, with a fresh IV each time and no plaintext in the box', () => {
    const box = sealBox(key, 'row-1', plaintext);
    assert.equal(box.length, SEALED_BOX_OVERHEAD_BYTES + Buffer.byteLength(plaintext));
    assert.equal(openBox(key, 'row-1', box), plaintext);
    assert.ok(!box.toString('latin1').includes(plaintext.slice(6)));
    assert.notDeepEqual(sealBox(key, 'row-1', plaintext), box);
    assert.equal(openBox(key, '', sealBox(key, '', '')), '', 'empty additional data and plaintext');
  });

  it('fails on any altered byte: IV, tag or ciphertext', () => {
    const box = sealBox(key, 'row-1', plaintext);
    for (const i of [0, 11, 12, 27, 28, box.length - 1]) {
      const tampered = Buffer.from(box);
      tampered[i] ^= 0x01;
      assert.throws(() => openBox(key, 'row-1', tampered), Error, `byte ${i}`);
    }
    assert.throws(() => openBox(key, 'row-1', box.subarray(0, box.length - 1)), 'cut short');
    assert.throws(() => openBox(key, 'row-1', box.subarray(0, 20)), /truncated/);
  });

  it('fails under other additional data or another key', () => {
    const box = sealBox(key, 'row-1', plaintext);
    assert.throws(() => openBox(key, 'row-2', box));
    assert.throws(() => openBox(key, 'row-1 ', box));
    assert.throws(() => openBox(randomBytes(32), 'row-1', box));
  });

  it('takes 32-byte keys only', () => {
    assert.throws(() => sealBox(randomBytes(16), 'a', 'b'), /32 bytes/);
    assert.throws(() => openBox(randomBytes(31), 'a', sealBox(key, 'a', 'b')), /32 bytes/);
  });

  it('opens a box that sits inside a larger buffer (a bytea read from the database)', () => {
    const box = sealBox(key, 'row-1', plaintext);
    const larger = Buffer.concat([Buffer.from('xx'), box, Buffer.from('yy')]);
    assert.equal(openBox(key, 'row-1', larger.subarray(2, 2 + box.length)), plaintext);
  });
});
