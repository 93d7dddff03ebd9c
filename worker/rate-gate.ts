// Per-endpoint pacing of the relay's attempts (rateLimitPerSecond): a token bucket per
// endpoint, holding at most one second's worth, so an endpoint that set a rate never receives
// more than that in any second from this process, and a burst after a quiet spell is bounded too.

interface Bucket {
  tokens: number;
  refilledAtMs: number;
}

export class RateGate {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly nowMs: () => number = () => performance.now()) {}

  /**
   * Takes one token of `key` when it has one and returns 0; else returns how many ms until it
   * will. A null rate is unlimited (and forgets any bucket the key had).
   */
  take(key: string, perSecond: number | null): number {
    if (perSecond === null) {
      this.buckets.delete(key);
      return 0;
    }
    const now = this.nowMs();
    const bucket = this.buckets.get(key) ?? { tokens: perSecond, refilledAtMs: now };
    bucket.tokens = Math.min(perSecond, bucket.tokens + ((now - bucket.refilledAtMs) * perSecond) / 1000);
    bucket.refilledAtMs = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - bucket.tokens) * 1000) / perSecond);
  }
}
