// AES-256-GCM with a fresh 96-bit IV per message, laid out as IV | tag | ciphertext: the one
// sealing format of the service (stored idempotent answers, webhook signing secrets). The
// additional data is authenticated, not stored: callers bind a box to the row and field it
// belongs to, so a box copied anywhere else fails to open.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export const SEALED_BOX_KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** What sealing adds to the plaintext: a box is never shorter. */
export const SEALED_BOX_OVERHEAD_BYTES = IV_BYTES + TAG_BYTES;

function assertKey(key: Uint8Array): void {
  if (key.length !== SEALED_BOX_KEY_BYTES)
    throw new Error(`a sealing key has ${SEALED_BOX_KEY_BYTES} bytes, not ${key.length}`);
}

export function sealBox(key: Uint8Array, additionalData: string, plaintext: string): Buffer<ArrayBuffer> {
  assertKey(key);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(additionalData, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]);
}

/** Throws when the box was sealed under another key or additional data, or was altered. */
export function openBox(key: Uint8Array, additionalData: string, sealed: Uint8Array): string {
  assertKey(key);
  const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
  if (bytes.length < SEALED_BOX_OVERHEAD_BYTES) throw new Error('the sealed box is truncated');
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(additionalData, 'utf8'));
  decipher.setAuthTag(bytes.subarray(IV_BYTES, SEALED_BOX_OVERHEAD_BYTES));
  return Buffer.concat([decipher.update(bytes.subarray(SEALED_BOX_OVERHEAD_BYTES)), decipher.final()]).toString('utf8');
}
