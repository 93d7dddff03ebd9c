// Addresses of the run's PostgreSQL database and Temporal server (set by global-setup.ts), and
// the settings the run's services share.
import { createHash } from 'node:crypto';
import { createWebhookDestinations, type WebhookDestinations } from '../../core/webhooks/destination-guard';
import { parseKeyRing } from '../../core/crypto/key-ring';

export function testDatabaseUrl(): string {
  const url = process.env.TEST_RUN_DATABASE_URL;
  if (!url) throw new Error('TEST_RUN_DATABASE_URL is not set: run tests through `npm test`');
  return url;
}

export function testTemporalAddress(): string {
  const address = process.env.TEST_TEMPORAL_ADDRESS;
  if (!address) throw new Error('TEST_TEMPORAL_ADDRESS is not set: run tests through `npm test`');
  return address;
}

/**
 * The tests' deployment lets webhooks go to loopback receivers (test/helpers/webhooks.ts starts
 * them on 127.0.0.1), as the dev stack does (WEBHOOK_ALLOW_PRIVATE_DESTINATIONS=true). Tests of
 * the refusals build their own with `allowPrivate: false`.
 */
export const testWebhookDestinations: WebhookDestinations = createWebhookDestinations({ allowPrivate: true });

/**
 * The tests' WEBHOOK_SECRET_KEYS: one fixed key, so a row sealed by one test's API opens in any
 * other test's worker, and API processes that tests spawn get the same value. Tests of key
 * rotation build their own rings, over databases of their own.
 */
export const TEST_WEBHOOK_SECRET_KEYS = `test:${createHash('sha256').update('issuer-rewards test webhook secret key').digest('base64')}`;
export const testWebhookSecretKeys = parseKeyRing('TEST_WEBHOOK_SECRET_KEYS', TEST_WEBHOOK_SECRET_KEYS).ring!;
