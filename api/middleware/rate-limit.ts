// Rate limits per issuer token (API.md "Safety and integration").
//
// Two policies, each counted per token in fixed windows of RATE_LIMIT_WINDOW_SECONDS:
// - "default", in requests: every issuer route, ingestion included (one request each);
// - "events", in events: the ingestion routes, where a batch of n events counts n.
// A window's quota is the per-second rate times the window, and a token may spend all of it
// at once: that is the burst. A token's rates are its issuer's overrides where set, else the
// deployment's defaults; they travel in the authenticated issuer (api/middleware/auth.ts,
// cached by token-cache.ts), so a check reads no database.
//
// Counting is api/middleware/rate-limit-counters.ts: in this process's memory for a single API
// process; with API_PROCESSES > 1 in the cluster's primary, asked over IPC (the checks of one
// event-loop turn in one message, no database). The counters only count; the quota is compared
// here, so an operator's override applies to the very next request without restarting any window.
// Counters are per API host: behind a load balancer each host enforces the full limit (docs/operating/security.md,
// "Rate limits"). A refused request still counts in its window: retrying at once does not help.
// A counter that cannot answer (the primary unreachable) lets the request through, logged: the
// limits protect capacity and must never take the API down themselves.
import cluster from 'node:cluster';
import type { Context } from 'koa';
import {
  BatchingClusterCounters,
  memoryCounter,
  serveClusterCounters,
  WindowCounters,
  workerLink,
  type Counter,
} from './rate-limit-counters';
import { ApiError } from '../../core/errors';
import type { Logger } from '../../core/logger';
import type { AuthKind } from './auth';
import { issuerOf } from './auth';

export interface RateLimitSettings {
  requestsPerSecond: number;
  eventsPerSecond: number;
  /** Length of a counting window, in seconds: also the burst, since a window's quota may go at once. */
  windowSeconds: number;
}

/** An issuer's overrides as stored (null = the deployment's default). */
export interface RateLimitOverrides {
  requestsPerSecond: number | null;
  eventsPerSecond: number | null;
}

/** What the check needs of a route declaration (api/route.ts). */
export interface RateLimitedRoute {
  auth: AuthKind;
  /** Ingestion: the number of events the parsed (not yet validated) body offers. */
  rateLimitEvents?(body: unknown): number;
}

type PolicyName = 'default' | 'events';

interface Usage {
  policy: PolicyName;
  quota: number;
  used: number;
  resetSeconds: number;
}

// Waiting longer than this for the primary means it is in trouble; the request goes through.
const CLUSTER_TIMEOUT_MS = 1000;

export class RateLimiter {
  constructor(
    readonly settings: RateLimitSettings,
    private readonly counters: Record<PolicyName, Counter>,
  ) {}

  /** Counts the request (and its events) against the caller's token; throws 429 when over. */
  async check(ctx: Context, route: RateLimitedRoute): Promise<void> {
    if (route.auth !== 'issuer') return;
    const issuer = issuerOf(ctx);
    const events = route.rateLimitEvents ? route.rateLimitEvents((ctx.request as { body?: unknown }).body) : undefined;
    // The request's logger is made on first use (request-id.ts): only a failure asks for it.
    const usages = await this.count(
      issuer.tokenId,
      issuer.rateLimits,
      events,
      () => ctx.state.log as Logger | undefined,
    );
    if (!usages) return;
    ctx.set(
      'RateLimit-Policy',
      usages.map((u) => `"${u.policy}";q=${u.quota};w=${this.settings.windowSeconds}`).join(', '),
    );
    ctx.set(
      'RateLimit',
      usages.map((u) => `"${u.policy}";r=${Math.max(u.quota - u.used, 0)};t=${u.resetSeconds}`).join(', '),
    );
    const over = usages.filter((u) => u.used > u.quota);
    if (over.length > 0) throw this.refusal(over, events);
  }

  private async count(
    tokenId: string,
    overrides: RateLimitOverrides,
    events: number | undefined,
    log: () => Logger | undefined,
  ): Promise<Usage[] | undefined> {
    const window = this.settings.windowSeconds;
    const quotas: Array<[PolicyName, number, number]> = [
      ['default', (overrides.requestsPerSecond ?? this.settings.requestsPerSecond) * window, 1],
    ];
    if (events !== undefined)
      quotas.push(['events', (overrides.eventsPerSecond ?? this.settings.eventsPerSecond) * window, events]);
    try {
      // Both counters at once: an ingestion request waits for one round trip to the primary, not two in a row.
      const results = await Promise.all(
        quotas.map(([policy, , points]) => this.counters[policy].consume(tokenId, points)),
      );
      return quotas.map(([policy, quota], i) => ({
        policy,
        quota,
        used: results[i].consumedPoints,
        resetSeconds: Math.min(Math.max(Math.ceil(results[i].msBeforeNext / 1000), 1), window),
      }));
    } catch (err) {
      log()?.warn({ err }, 'rate limit counters unavailable; request let through');
      return undefined;
    }
  }

  private refusal(over: Usage[], events: number | undefined): ApiError {
    const retryAfterSeconds = Math.max(...over.map((u) => u.resetSeconds));
    const windowSeconds = this.settings.windowSeconds;
    const eventsOver = over.find((u) => u.policy === 'events');
    const headers = { 'Retry-After': String(retryAfterSeconds) };
    if (eventsOver && events !== undefined && events > eventsOver.quota) {
      return new ApiError(
        'rate_limited',
        `This batch holds ${events} events, more than the ${eventsOver.quota} this token may send in ${windowSeconds} s; send smaller batches.`,
        {
          reasonCode: 'batch_exceeds_event_limit',
          headers,
          details: { policy: 'events', limit: eventsOver.quota, windowSeconds, retryAfterSeconds, events },
        },
      );
    }
    // The request policy first: when requests are over, fewer events per batch would not help.
    const usage = over.find((u) => u.policy === 'default') ?? over[0];
    const unit = usage.policy === 'events' ? 'events' : 'requests';
    return new ApiError(
      'rate_limited',
      `Rate limit of ${usage.quota} ${unit} per ${windowSeconds} s exceeded for this token; retry after ${retryAfterSeconds} s.`,
      {
        reasonCode: usage.policy === 'events' ? 'event_rate_exceeded' : 'request_rate_exceeded',
        headers,
        details: {
          policy: usage.policy,
          limit: usage.quota,
          windowSeconds,
          retryAfterSeconds,
          ...(usage.policy === 'events' ? { events } : {}),
        },
      },
    );
  }
}

/**
 * The limiter of this process. In a node:cluster copy (API_PROCESSES > 1) the counters are
 * shared through the primary, which must have called startRateLimitPrimary() before forking.
 */
export function createRateLimiter(settings: RateLimitSettings, options: { shared?: boolean } = {}): RateLimiter {
  const shared = options.shared ?? cluster.isWorker;
  let counter: (prefix: string) => Counter;
  if (shared) {
    const primaryCounters = new BatchingClusterCounters(workerLink(), CLUSTER_TIMEOUT_MS);
    counter = (prefix) => primaryCounters.counter(prefix);
  } else {
    const own = new WindowCounters(settings.windowSeconds);
    counter = (prefix) => memoryCounter(own, prefix);
  }
  return new RateLimiter(settings, { default: counter('rate-limit-requests'), events: counter('rate-limit-events') });
}

/** In the cluster's primary, before forking: holds the counters every API process shares (over IPC). */
export function startRateLimitPrimary(settings: Pick<RateLimitSettings, 'windowSeconds'>): void {
  serveClusterCounters(settings.windowSeconds);
}
