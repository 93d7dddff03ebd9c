// Which time-based notices a branded grant is due (API.md, "Cardholder reward events"), and
// when its next one falls due. Pure: the scan (activities/notices) reads the grants whose
// next notice has passed, asks this what to send, and stores the answer's state with the
// records it writes.
//
// The rules, at the issuer's clock `now`:
// - Nothing is sent for a grant that is spent or expired: the expiry itself has its own event.
// - reward_available once, when availableAt has passed.
// - reward_expiring once per lead time, when the grant is available and expiresAt minus that
//   lead has passed. When several lead times have passed since the last look (a sandbox clock
//   moved a month, an issuer added a lead time), only the smallest is sent: "expires within 7
//   days" makes "within 30 days" stale news.

const DAY_MS = 86_400_000;

export interface GrantNoticeState {
  availableAt: Date;
  expiresAt: Date;
  remainingMinor: number;
  availableNoticed: boolean;
  /** The smallest lead time already handled; null before the first. */
  expiryNoticedDays: number | null;
}

export type DueNotice = { type: 'reward_available' } | { type: 'reward_expiring'; daysBeforeExpiry: number };

export interface NoticePlan {
  notices: DueNotice[];
  availableNoticed: boolean;
  expiryNoticedDays: number | null;
  /** When to look at the grant again; null when it has no notice left. */
  nextNoticeAt: Date | null;
}

/** Lead times as the rules use them: distinct positive whole days, largest first. */
export function normaliseLeadDays(days: readonly number[]): number[] {
  return [...new Set(days.filter((d) => Number.isSafeInteger(d) && d > 0))].sort((a, b) => b - a);
}

export function planNotices(grant: GrantNoticeState, leadDays: readonly number[], now: Date): NoticePlan {
  const leads = normaliseLeadDays(leadDays);
  const t = now.getTime();
  const expires = grant.expiresAt.getTime();
  const available = grant.availableAt.getTime();
  if (grant.remainingMinor <= 0 || t >= expires)
    return {
      notices: [],
      availableNoticed: grant.availableNoticed,
      expiryNoticedDays: grant.expiryNoticedDays,
      nextNoticeAt: null,
    };
  if (t < available)
    return {
      notices: [],
      availableNoticed: grant.availableNoticed,
      expiryNoticedDays: grant.expiryNoticedDays,
      nextNoticeAt: grant.availableAt,
    };

  const notices: DueNotice[] = grant.availableNoticed ? [] : [{ type: 'reward_available' }];
  const pending = leads.filter((d) => grant.expiryNoticedDays === null || d < grant.expiryNoticedDays);
  const passed = pending.filter((d) => t >= expires - d * DAY_MS);
  const expiryNoticedDays = passed.length > 0 ? Math.min(...passed) : grant.expiryNoticedDays;
  if (passed.length > 0) notices.push({ type: 'reward_expiring', daysBeforeExpiry: expiryNoticedDays! });
  const next = pending.filter((d) => !passed.includes(d));
  return {
    notices,
    availableNoticed: true,
    expiryNoticedDays,
    nextNoticeAt: next.length > 0 ? new Date(expires - Math.max(...next) * DAY_MS) : null,
  };
}
