// Whether a group is in an offer's audience (API.md, Targeted offers), decided once, as of the
// group's entry into the offer (the later of the offer's start and the group's creation), and
// stored with its enrolment: the audience is never asked again for that offer and group, so a
// group that later buys, changes segments or lapses keeps the arm it entered with. Pure: the
// caller reads the group's segments and its purchase history at the merchant.

/** A segment: the issuer's label for a group (the group routes' schema uses the same source). */
export const SEGMENT_PATTERN_SOURCE = '^[a-z0-9_-]{1,40}$';
const SEGMENT_PATTERN = new RegExp(SEGMENT_PATTERN_SOURCE);
export const MERCHANT_HISTORY_KINDS = ['new', 'lapsed', 'existing'] as const;
export type MerchantHistoryKind = (typeof MERCHANT_HISTORY_KINDS)[number];
export const MAX_LOOKBACK_DAYS = 730;
const DAY_MS = 86_400_000;

export interface Audience {
  /** In when the group carries one of these (absent: any group). */
  segments?: readonly string[];
  /** Out when the group carries one of these, whatever else holds. */
  excludeSegments?: readonly string[];
  /** The group's purchases at the offer's merchant in the lookback before its entry. */
  merchantHistory?: { kind: MerchantHistoryKind; lookbackDays: number };
}

export interface AudienceFacts {
  /** When the group entered the offer. */
  entryAt: Date;
  segments: readonly string[];
  /** The group's latest settled purchase at the merchant before its entry that refunds did not
   *  undo in full; null when there is none. */
  lastPurchaseBeforeEntryAt: Date | null;
}

export interface AudienceDecision {
  inAudience: boolean;
  /** Says which rule decided, for the match trace and the enrolment's record. */
  detail: string;
}

/** The decision for `audience` (null: every group is in it). */
export function decideAudience(audience: Audience | null, facts: AudienceFacts): AudienceDecision {
  if (audience === null) return { inAudience: true, detail: 'the offer has no audience: every group' };
  const carried = new Set(facts.segments);
  const excluded = (audience.excludeSegments ?? []).filter((s) => carried.has(s));
  if (excluded.length > 0) return out(`the group carries the excluded segment ${excluded[0]}`);
  if (audience.segments !== undefined && !audience.segments.some((s) => carried.has(s)))
    return out(`the group carries none of the segments ${audience.segments.join(', ')}`);
  if (audience.merchantHistory) return byHistory(audience.merchantHistory, facts);
  return { inAudience: true, detail: describeIn(audience) };
}

function byHistory(history: NonNullable<Audience['merchantHistory']>, facts: AudienceFacts): AudienceDecision {
  const { kind, lookbackDays } = history;
  if (!Number.isInteger(lookbackDays) || lookbackDays < 1 || lookbackDays > MAX_LOOKBACK_DAYS)
    throw new RangeError(`lookbackDays ${lookbackDays} is outside 1..${MAX_LOOKBACK_DAYS}`);
  const last = facts.lastPurchaseBeforeEntryAt;
  if (last !== null && last >= facts.entryAt) throw new RangeError('the last purchase must come before the entry');
  const since = new Date(facts.entryAt.getTime() - lookbackDays * DAY_MS);
  const inLookback = last !== null && last >= since;
  const seen =
    last === null ? 'no purchase at the merchant before' : `its last purchase at the merchant ${last.toISOString()}`;
  const matches = kind === 'existing' ? inLookback : kind === 'lapsed' ? !inLookback && last !== null : !inLookback;
  const detail = `${kind} in ${lookbackDays} days before ${facts.entryAt.toISOString()}: ${seen}`;
  return matches ? { inAudience: true, detail } : out(`not ${detail}`);
}

const out = (detail: string): AudienceDecision => ({ inAudience: false, detail });

function describeIn(audience: Audience): string {
  return audience.segments ? `the group carries one of ${audience.segments.join(', ')}` : 'no rule excludes the group';
}

/** What is wrong with an audience as an operator sent it, by JSON pointer; empty when none. */
export function audienceProblems(audience: Audience, path = '/audience'): Array<{ path: string; message: string }> {
  const problems: Array<{ path: string; message: string }> = [];
  for (const key of ['segments', 'excludeSegments'] as const) {
    const list = audience[key];
    if (list === undefined) continue;
    list.forEach((s, i) => {
      if (!SEGMENT_PATTERN.test(s))
        problems.push({ path: `${path}/${key}/${i}`, message: `must match ${SEGMENT_PATTERN_SOURCE}` });
    });
  }
  const both = (audience.segments ?? []).filter((s) => (audience.excludeSegments ?? []).includes(s));
  if (both.length > 0)
    problems.push({ path: `${path}/excludeSegments`, message: `names ${both[0]}, which segments includes` });
  return problems;
}
