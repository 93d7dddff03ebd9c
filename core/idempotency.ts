// Pure parts of Idempotency-Key (API.md, "Safety and integration"): which keys are valid, the
// fingerprint that tells "the same request" from "another request under the same key", and
// the sealing of stored answers. The HTTP flow is api/middleware/idempotency.ts.
import { createHash, hkdfSync } from 'node:crypto';
import { openBox, sealBox, SEALED_BOX_KEY_BYTES } from './crypto/sealed-box';
import { canonicalJson } from './canonical-json';

/** 1 to 255 visible ASCII characters (no space, no control character); the table checks it too. */
const KEY_FORMAT = /^[!-~]{1,255}$/;

export function isValidIdempotencyKey(value: string): boolean {
  return KEY_FORMAT.test(value);
}

/** SHA-256 (hex) of the validated query and body: what is kept of the request, never the body. */
export function requestHash(input: { query: unknown; body: unknown }): string {
  return createHash('sha256')
    .update(canonicalJson({ query: input.query, body: input.body ?? null }))
    .digest('hex');
}

// Stored answers carry secrets that are shown once (an API token at creation, a webhook signing
// secret), so they are sealed with AES-256-GCM (core/crypto/sealed-box.ts) under a key derived
// from the caller's own bearer token: replaying needs that token, and a copy of the database
// reveals nothing. The additional data binds a sealed answer to its row, so it cannot be moved
// to another key or request.
const SEAL_INFO = 'issuer-rewards idempotency response v1';

function sealingKey(callerSecret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', callerSecret, Buffer.alloc(0), SEAL_INFO, SEALED_BOX_KEY_BYTES));
}

export function seal(callerSecret: string, additionalData: string, plaintext: string): Buffer {
  return sealBox(sealingKey(callerSecret), additionalData, plaintext);
}

/** Throws when the sealed bytes were made under another secret or for another row. */
export function unseal(callerSecret: string, additionalData: string, sealed: Uint8Array): string {
  return openBox(sealingKey(callerSecret), additionalData, sealed);
}
