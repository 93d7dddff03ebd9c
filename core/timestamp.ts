// The one parser of timestamps that arrive from outside (bodies, query strings, events):
// RFC 3339 date-times that name a real instant. JavaScript's Date silently turns what it
// cannot represent into Invalid Date or rolls it over (a leap second `23:59:60`, `02-30`),
// so a value is accepted only when every field is in range for its calendar month and the
// instant round-trips. Years are 0001-9999 (what the format can write); callers with a
// narrower window (ingested events: api/ingestion/event-window.ts) check it themselves.

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysIn(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
}

// An ingested event's dates are read up to six times on the way in (schema format, date
// window, fingerprint, stored row): the last few hundred texts parsed are remembered, as epoch
// milliseconds (a Date is mutable, so each caller gets its own). Cleared when full: bounded.
const recent = new Map<string, number>();
const RECENT_MAX = 512;

/** The instant `text` names, or undefined when it is not a valid RFC 3339 date-time. */
export function parseTimestamp(text: string): Date | undefined {
  const known = recent.get(text);
  if (known !== undefined) return new Date(known);
  const instant = parseInstantMs(text);
  if (instant === undefined) return undefined;
  if (recent.size >= RECENT_MAX) recent.clear();
  recent.set(text, instant);
  return new Date(instant);
}

function parseInstantMs(text: string): number | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  // Second 60 (a leap second) has no instant in JavaScript, or in PostgreSQL's timestamptz.
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  if (!m[8]) {
    const [offsetHours, offsetMins] = [Number(m[10]), Number(m[11])];
    if (offsetHours > 23 || offsetMins > 59) return undefined;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  // Milliseconds: further digits are below what the service stores, and are dropped.
  const millis = m[7] ? Number(m[7].slice(1, 4).padEnd(3, '0')) : 0;
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day); // years below 100 are not shifted into the 1900s
  utc.setUTCHours(hour, minute, second, millis);
  const instant = utc.getTime() - offsetMinutes * 60_000;
  return Number.isFinite(instant) ? instant : undefined;
}

/** For values a schema already checked with format date-time: their instant, never Invalid Date. */
export function toInstant(text: string): Date {
  const instant = parseTimestamp(text);
  if (!instant) throw new Error(`not a valid timestamp: ${JSON.stringify(text)}`);
  return instant;
}
