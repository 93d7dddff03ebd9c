// How long webhook records are kept (API.md, "Card data and erasure"; decision 0056): an issuer's
// `webhookRetentionDays`, counted from the webhook's createdAt, and only once every delivery of it
// has ended. The bounds are the database's CHECK (migration 20261203120000_webhook_retention).

export const DEFAULT_WEBHOOK_RETENTION_DAYS = 30;
/**
 * A day at least: a retried step that writes a webhook comes back within minutes and must still
 * find the record its idempotency key names, and an issuer's support still sees yesterday's.
 */
export const MIN_WEBHOOK_RETENTION_DAYS = 1;
/** Ten years: the longest record-keeping period an issuer's regulator is likely to ask for. */
export const MAX_WEBHOOK_RETENTION_DAYS = 3650;

/**
 * Delivery statuses that are final: nothing more is sent unless someone replays or recovers it.
 * `pending` (waiting for the relay) and `delivering` (the request out, or retries waiting on their
 * timers) are not, and a webhook with such a delivery is kept whatever its age.
 */
export const FINISHED_DELIVERY_STATUSES = ['delivered', 'failed', 'skipped'] as const;
