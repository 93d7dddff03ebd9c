// The issuer's "now" (the sandbox test clock). A sandbox issuer may move its clock ahead
// (POST /api/v2/sandbox/clock/advance); every read and check that decides by "now" (grant
// availability and expiry, offer windows, the ingestion date window) takes this instead of the
// server's clock. The offset travels on the cached token → issuer record, so production
// issuers (offset 0, a database CHECK) pay one addition and no query.
import type { Context } from 'koa';
import type { Clock } from '../deps';
import { issuerOf } from '../middleware/auth';

/** Real time moved by the issuer's clock offset. */
export function shiftedNow(clock: Clock, clockOffsetMs: number): Date {
  const now = clock.now();
  return clockOffsetMs === 0 ? now : new Date(now.getTime() + clockOffsetMs);
}

/** The calling issuer's now (a route with issuer authentication). */
export function issuerNow(ctx: Context, clock: Clock): Date {
  return shiftedNow(clock, issuerOf(ctx).clockOffsetMs);
}
