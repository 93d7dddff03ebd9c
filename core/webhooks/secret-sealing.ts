// Webhook signing secrets at rest (docs/operating/security.md, "Webhook secrets at rest"). An
// endpoint's secrets are stored sealed (core/crypto/sealed-box.ts, AES-256-GCM) under the first key of WEBHOOK_SECRET_KEYS,
// with that key's id beside them; both secrets of a row are always sealed under the same key.
// The additional data names the issuer and the slot, so a box copied to another issuer's row,
// or from the previous-secret slot to the current one, does not open.
import { openBox, sealBox } from '../crypto/sealed-box';
import { UnknownKeyError, type KeyRing } from '../crypto/key-ring';

export interface PlainSecrets {
  secret: string;
  previousSecret: string | null;
}

/** The stored form (webhook_endpoint.secret_key_id, secret_ciphertext, previous_secret_ciphertext). */
export interface SealedSecrets {
  secretKeyId: string;
  secretCiphertext: Uint8Array<ArrayBuffer>;
  previousSecretCiphertext: Uint8Array<ArrayBuffer> | null;
}

type Slot = 'secret' | 'previous_secret';

/** Issuer ids are `iss_` + a UUID (core/ids.ts): no newline can blur the fields. */
function additionalData(issuerId: string, slot: Slot): string {
  return `issuer-rewards webhook signing secret v1\n${slot}\n${issuerId}`;
}

export class WebhookSecretUnreadableError extends Error {}

export function sealSecrets(ring: KeyRing, issuerId: string, plain: PlainSecrets): SealedSecrets {
  return {
    secretKeyId: ring.primaryKeyId,
    secretCiphertext: sealBox(ring.primaryKey, additionalData(issuerId, 'secret'), plain.secret),
    previousSecretCiphertext:
      plain.previousSecret === null
        ? null
        : sealBox(ring.primaryKey, additionalData(issuerId, 'previous_secret'), plain.previousSecret),
  };
}

/** Throws WebhookSecretUnreadableError naming the issuer and key id when a box does not open. */
export function openSecrets(ring: KeyRing, issuerId: string, sealed: SealedSecrets): PlainSecrets {
  const open = (box: Uint8Array, slot: Slot): string => {
    try {
      return openBox(ring.key(sealed.secretKeyId), additionalData(issuerId, slot), box);
    } catch (err) {
      const why =
        err instanceof UnknownKeyError
          ? err.message
          : `it is not a ${slot} of ${issuerId} sealed under key id "${sealed.secretKeyId}"`;
      throw new WebhookSecretUnreadableError(`The webhook ${slot} of issuer ${issuerId} cannot be opened: ${why}`);
    }
  };
  return {
    secret: open(sealed.secretCiphertext, 'secret'),
    previousSecret:
      sealed.previousSecretCiphertext === null ? null : open(sealed.previousSecretCiphertext, 'previous_secret'),
  };
}
