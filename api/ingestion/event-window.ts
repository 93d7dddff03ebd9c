// The time window an ingested event's dates must fall in (docs/decisions/0016-ingestion-identity-and-consistency.md): a purchase
// is reported within days, so a date far in the past or in the future is a wrong field, not
// a real purchase, and must not earn (an offer window or an expiry computed from year 0001
// or 9999 would be nonsense). The schema has already checked that each date is a real instant.
import type { FieldError } from '../../core/errors';
import { toInstant } from '../../core/timestamp';
import type { IngestedEvent } from './schemas';

export const MAX_EVENT_AGE_DAYS = 400;
export const MAX_EVENT_LEAD_DAYS = 1;
const DAY_MS = 86_400_000;

const DATE_FIELDS = ['createdAt', 'settledAt'] as const;

/** The event's dates outside [now - 400 days, now + 1 day], as field errors. */
export function eventDatesOutsideWindow(event: IngestedEvent, now: Date): FieldError[] {
  const problems: FieldError[] = [];
  for (const field of DATE_FIELDS) {
    const text = (event as Partial<Record<(typeof DATE_FIELDS)[number], string>>)[field];
    if (text === undefined) continue;
    const at = toInstant(text).getTime();
    if (at < now.getTime() - MAX_EVENT_AGE_DAYS * DAY_MS)
      problems.push({ path: `/${field}`, message: `is more than ${MAX_EVENT_AGE_DAYS} days ago` });
    if (at > now.getTime() + MAX_EVENT_LEAD_DAYS * DAY_MS)
      problems.push({ path: `/${field}`, message: `is more than ${MAX_EVENT_LEAD_DAYS} day in the future` });
  }
  return problems;
}
