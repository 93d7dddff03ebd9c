// When an endpoint that keeps failing is disabled (API.md, "Webhook endpoints"): once every
// attempt to it has failed for WEBHOOK_ENDPOINT_DISABLE_AFTER (5 days unless the deployment
// or the operator, per issuer, says otherwise; `never` turns it off). A receiver that is down
// for good would otherwise cost a full retry schedule per webhook for as long as the issuer
// sends purchases. Pure rules; the attempt's record applies them (activities/webhooks/attempt.ts).
import { parseDuration } from '../duration';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export const DEFAULT_ENDPOINT_DISABLE_AFTER_MS = 5 * DAY_MS;
/** Shorter would disable an endpoint for an afternoon's outage. */
export const MIN_ENDPOINT_DISABLE_AFTER_MS = HOUR_MS;
export const MAX_ENDPOINT_DISABLE_AFTER_MS = 365 * DAY_MS;

/**
 * An endpoint whose last attempts all failed is tripped: the relays send it one delivery at a
 * time, at most one per probe interval, until an attempt succeeds. A dead receiver then costs
 * one attempt (and at most one retry run) per interval instead of one per webhook written for
 * it, and a struggling one is not hammered; its other deliveries wait in the outbox and go
 * out at its pace once it answers. Deliveries already retrying keep their schedules.
 */
export const TRIP_AFTER_FAILURES = 5;
export const PROBE_INTERVAL_MS = 30_000;

/** The issuer's stored override (issuer.webhook_endpoint_disable_after) as a value. */
export type DisableAfterOverride = string | null;

/**
 * How long an endpoint may fail before it is disabled, in ms, or null for never: the issuer's
 * override (`never` or a duration) when it has one, else the deployment's setting.
 */
export function disableAfterMs(override: DisableAfterOverride, deploymentMs: number | null): number | null {
  if (override === null) return deploymentMs;
  if (override === 'never') return null;
  return parseDuration(override) ?? deploymentMs;
}

/**
 * The instant before which a run of failures must have begun for a failed attempt at `at`
 * to disable its endpoint; null when the endpoint is never disabled.
 */
export function disableIfFailingSince(at: Date, afterMs: number | null): Date | null {
  return afterMs === null ? null : new Date(at.getTime() - afterMs);
}

/** Whether an override is acceptable as the operator writes it: `never` or a bounded duration. */
export function isDisableAfterOverride(text: string): boolean {
  if (text === 'never') return true;
  const ms = parseDuration(text);
  return ms !== undefined && ms >= MIN_ENDPOINT_DISABLE_AFTER_MS && ms <= MAX_ENDPOINT_DISABLE_AFTER_MS;
}
