// The dev stack's WEBHOOK_SECRET_KEYS: generated once into .data/webhook-secret-key, like the
// operator token, so `npm start` needs no setup and its endpoints' secrets survive restarts.
// The file holds the variable's value itself: add a key in front of the existing one there
// to rehearse a rotation (then npm run admin -- webhook:reencrypt).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../../core/config';
import { generateKeyRingEntry, parseKeyRing, type KeyRing } from '../../core/crypto/key-ring';

export const WEBHOOK_SECRET_KEY_FILE = 'webhook-secret-key';

export interface DevWebhookSecretKeys {
  keys: KeyRing;
  /** The value for WEBHOOK_SECRET_KEYS of the stack's processes. */
  value: string;
  source: string;
}

/** Reads the file, if there is one; a bad one is a configuration error naming the file. */
export function readDevWebhookSecretKeys(dataDir: string): DevWebhookSecretKeys | undefined {
  const file = join(dataDir, WEBHOOK_SECRET_KEY_FILE);
  if (!existsSync(file)) return undefined;
  const value = readFileSync(file, 'utf8').trim();
  const { ring, problems } = parseKeyRing(file, value);
  if (!ring) throw new ConfigError(problems);
  return { keys: ring, value, source: `kept in ${file}` };
}

/** The file's keys, generated on the first run (readable by the owner only). */
export function ensureDevWebhookSecretKeys(dataDir: string): DevWebhookSecretKeys {
  const file = join(dataDir, WEBHOOK_SECRET_KEY_FILE);
  if (!existsSync(file)) writeFileSync(file, `${generateKeyRingEntry('dev1')}\n`, { mode: 0o600, flag: 'wx' });
  return readDevWebhookSecretKeys(dataDir)!;
}
