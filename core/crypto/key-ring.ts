// Named 256-bit keys from the environment, written `id:base64(32 bytes)` and comma-separated
// (WEBHOOK_SECRET_KEYS). The first key seals; every listed key opens what it sealed, found by
// the key id stored beside each box. Rotating a key is therefore: list the new key second on
// every process (all can open what it will seal), move it first (it seals from then on),
// re-seal the stored boxes (npm run admin -- webhook:reencrypt), then drop the old key.
import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { SEALED_BOX_KEY_BYTES } from './sealed-box';

/** Ids are stored in the database beside every box: short and plain. */
export const KEY_ID_FORMAT = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$/;
/** More keys than this is a mistake (rotation needs two at a time). */
const MAX_KEYS = 16;

export class UnknownKeyError extends Error {}

export class KeyRing {
  readonly primaryKeyId: string;
  // A true private field: the key bytes never show in JSON, util.inspect or a logged config.
  readonly #keys: ReadonlyMap<string, Buffer>;

  constructor(entries: ReadonlyArray<{ id: string; key: Uint8Array }>) {
    if (entries.length === 0) throw new Error('a key ring needs at least one key');
    const keys = new Map<string, Buffer>();
    for (const { id, key } of entries) {
      if (!KEY_ID_FORMAT.test(id)) throw new Error(`bad key id "${id}"`);
      if (keys.has(id)) throw new Error(`key id "${id}" is listed twice`);
      if (key.length !== SEALED_BOX_KEY_BYTES)
        throw new Error(`key "${id}" has ${key.length} bytes, not ${SEALED_BOX_KEY_BYTES}`);
      keys.set(id, Buffer.from(key));
    }
    this.primaryKeyId = entries[0].id;
    this.#keys = keys;
  }

  get keyIds(): string[] {
    return [...this.#keys.keys()];
  }

  get primaryKey(): Buffer {
    return this.#keys.get(this.primaryKeyId)!;
  }

  /** The key a box was sealed under; a clear error when the ring no longer lists it. */
  key(id: string): Buffer {
    const key = this.#keys.get(id);
    if (!key) throw new UnknownKeyError(`key id "${id}" is not among the configured keys (${this.keyIds.join(', ')})`);
    return key;
  }

  toJSON(): { primaryKeyId: string; keyIds: string[] } {
    return { primaryKeyId: this.primaryKeyId, keyIds: this.keyIds };
  }

  [inspect.custom](): string {
    return `KeyRing { primary: ${this.primaryKeyId}, ids: ${this.keyIds.join(', ')} }`;
  }
}

/**
 * Parses `id:base64,id:base64...` into a ring, or lists what is wrong. Problems never quote a
 * key: they name the variable, the entry's position and its id.
 */
export function parseKeyRing(name: string, text: string): { ring?: KeyRing; problems: string[] } {
  const problems: string[] = [];
  const entries: Array<{ id: string; key: Buffer }> = [];
  const parts = text.split(',').map((p) => p.trim());
  if (parts.length > MAX_KEYS) return { problems: [`${name} lists ${parts.length} keys; at most ${MAX_KEYS}`] };
  parts.forEach((part, i) => {
    const where = `${name} entry ${i + 1}`;
    const colon = part.indexOf(':');
    const id = colon < 0 ? '' : part.slice(0, colon);
    const encoded = colon < 0 ? '' : part.slice(colon + 1);
    if (!KEY_ID_FORMAT.test(id)) {
      problems.push(
        `${where} must be <id>:<base64 key>, the id 1 to 32 letters, digits, '.', '_' or '-' (starting with a letter or digit)`,
      );
      return;
    }
    const key = Buffer.from(encoded, 'base64');
    // Canonical standard base64 only, so that a typo cannot decode to some other 32 bytes.
    if (key.length !== SEALED_BOX_KEY_BYTES || key.toString('base64') !== encoded) {
      problems.push(
        `${where} (id "${id}") must hold ${SEALED_BOX_KEY_BYTES} random bytes in standard base64 (e.g. openssl rand -base64 32)`,
      );
      return;
    }
    if (entries.some((e) => e.id === id)) {
      problems.push(`${where}: key id "${id}" is listed twice`);
      return;
    }
    entries.push({ id, key });
  });
  if (problems.length > 0) return { problems };
  return { ring: new KeyRing(entries), problems };
}

/** A new `id:base64` entry with fresh random key bytes. */
export function generateKeyRingEntry(id: string): string {
  if (!KEY_ID_FORMAT.test(id)) throw new Error(`bad key id "${id}"`);
  return `${id}:${randomBytes(SEALED_BOX_KEY_BYTES).toString('base64')}`;
}
