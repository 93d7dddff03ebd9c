// Addresses of the run's PostgreSQL database and Temporal server (set by global-setup.ts), and
// the settings the run's services share.
import { createWebhookDestinations, type WebhookDestinations } from '../../core/webhooks/destination-guard';

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
