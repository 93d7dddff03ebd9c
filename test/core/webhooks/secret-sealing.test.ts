import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { generateKeyRingEntry, parseKeyRing } from '../../../core/crypto/key-ring';
import { openSecrets, sealSecrets, WebhookSecretUnreadableError } from '../../../core/webhooks/secret-sealing';
import { generateSigningSecret } from '../../../core/webhooks/signing';

describe('core/webhooks/secret-sealing', () => {
  const k1 = generateKeyRingEntry('k1');
  const k2 = generateKeyRingEntry('k2');
  const ring = parseKeyRing('KEYS', `${k2},${k1}`).ring!;
  const issuerId = `iss_${randomUUID()}`;
  const plain = { secret: generateSigningSecret(), previousSecret: generateSigningSecret() };

  it('seals both secrets under the first key and opens them again', () => {
    const sealed = sealSecrets(ring, issuerId, plain);
    assert.equal(sealed.secretKeyId, 'k2');
    assert.deepEqual(openSecrets(ring, issuerId, sealed), plain);
    assert.deepEqual(openSecrets(ring, issuerId, sealSecrets(ring, issuerId, { ...plain, previousSecret: null })), {
      ...plain,
      previousSecret: null,
    });
  });

  it('opens what an older key sealed while the ring still lists it', () => {
    const older = sealSecrets(parseKeyRing('KEYS', k1).ring!, issuerId, plain);
    assert.equal(older.secretKeyId, 'k1');
    assert.deepEqual(openSecrets(ring, issuerId, older), plain);
  });

  it('refuses a box moved to another issuer or to the other slot', () => {
    const sealed = sealSecrets(ring, issuerId, plain);
    assert.throws(() => openSecrets(ring, `iss_${randomUUID()}`, sealed), WebhookSecretUnreadableError);
    const swapped = {
      ...sealed,
      secretCiphertext: sealed.previousSecretCiphertext!,
      previousSecretCiphertext: sealed.secretCiphertext,
    };
    assert.throws(
      () => openSecrets(ring, issuerId, swapped),
      /webhook secret of issuer iss_.* cannot be opened: it is not a secret of/,
    );
  });

  it('refuses an altered box, and a key id the ring does not list, with a clear error', () => {
    const sealed = sealSecrets(ring, issuerId, plain);
    const tampered = Buffer.from(sealed.secretCiphertext);
    tampered[tampered.length - 1] ^= 0x80;
    assert.throws(
      () => openSecrets(ring, issuerId, { ...sealed, secretCiphertext: tampered }),
      WebhookSecretUnreadableError,
    );
    assert.throws(
      () => openSecrets(ring, issuerId, { ...sealed, secretKeyId: 'k1' }),
      WebhookSecretUnreadableError,
      'the id of another listed key',
    );
    assert.throws(
      () => openSecrets(parseKeyRing('KEYS', k1).ring!, issuerId, sealed),
      (err: Error) =>
        err instanceof WebhookSecretUnreadableError &&
        err.message.includes('key id "k2" is not among the configured keys (k1)'),
    );
  });
});
