// Caches token → issuer lookups, the one database query every issuer request would
// otherwise make (bench/: reads spend most of their time in queries). Correctness first:
// revoking a token or changing an issuer NOTIFYs `rewards_auth_changed` in the same
// transaction (api/issuers/store.ts), and every API process LISTENs and evicts that
// issuer's entries at once. While the listening connection is down the cache is off, so
// a revocation can never be missed; entries also expire after a minute regardless.
import { listen, type Listener } from '../../prisma/listen';
import type { DatabaseTimeouts } from '../../prisma/bounded-client';
import type { Logger } from '../../core/logger';
import type { AuthenticatedIssuer } from './auth';

export const AUTH_CHANGED_CHANNEL = 'rewards_auth_changed';

export class TokenCache {
  private readonly entries = new Map<string, { issuer: AuthenticatedIssuer; expiresAtMs: number }>();
  private listening = false;

  constructor(
    private readonly ttlMs = 60_000,
    private readonly maxEntries = 10_000,
  ) {}

  get(tokenHash: string, nowMs: number): AuthenticatedIssuer | undefined {
    if (!this.listening) return undefined;
    const entry = this.entries.get(tokenHash);
    if (!entry) return undefined;
    if (entry.expiresAtMs <= nowMs) {
      this.entries.delete(tokenHash);
      return undefined;
    }
    return entry.issuer;
  }

  set(tokenHash: string, issuer: AuthenticatedIssuer, nowMs: number): void {
    if (!this.listening) return;
    // Bounded: drop the oldest entry (Map keeps insertion order) rather than grow.
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(tokenHash, { issuer, expiresAtMs: nowMs + this.ttlMs });
  }

  evictIssuer(issuerId: string): void {
    for (const [hash, entry] of this.entries) if (entry.issuer.id === issuerId) this.entries.delete(hash);
  }

  setListening(listening: boolean): void {
    this.listening = listening;
    if (!listening) this.entries.clear();
  }
}

/** Keeps a LISTEN connection open and feeds the cache; the cache is off while it is down. */
export function listenForAuthChanges(
  databaseUrl: string,
  cache: TokenCache,
  logger: Logger,
  timeouts?: DatabaseTimeouts,
): Listener {
  return listen(
    databaseUrl,
    AUTH_CHANGED_CHANNEL,
    { onNotify: (issuerId) => issuerId && cache.evictIssuer(issuerId), onListening: (on) => cache.setListening(on) },
    logger,
    timeouts,
  );
}
