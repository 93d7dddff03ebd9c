// Durations as operators write them in the environment: a whole number and one unit, `90m`,
// `36h`, `10d`. One unit per value keeps the grammar obvious (`1h30m` is written `90m`), and
// a bare number is refused because nobody can tell whether `30` meant seconds or minutes.

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
type Unit = keyof typeof UNIT_MS;

/** Units from the largest, so formatting picks the shortest exact spelling. */
const UNITS_LARGEST_FIRST: Unit[] = ['d', 'h', 'm', 's', 'ms'];

export const DURATION_SYNTAX = 'a whole number with a unit ms, s, m, h or d (e.g. 30s, 90m, 10d)';

/** Milliseconds of `text`, or undefined when it is not a duration. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d{1,15})(ms|s|m|h|d)$/.exec(text.trim());
  if (!match) return undefined;
  const ms = Number(match[1]) * UNIT_MS[match[2] as Unit];
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/** The shortest exact spelling of `ms` (`86400000` → `1d`, `90000` → `90s`). */
export function formatDuration(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0) throw new RangeError(`not a duration in ms: ${ms}`);
  if (ms === 0) return '0s';
  const unit = UNITS_LARGEST_FIRST.find((u) => ms % UNIT_MS[u] === 0)!;
  return `${ms / UNIT_MS[unit]}${unit}`;
}
