// The settlement wait on a sandbox issuer's test clock. Workflow time is the
// Temporal server's, which a sandbox issuer cannot move; its clock is real time plus an offset
// kept in the database. So the run learns the offset twice:
//   - where its wait starts: the preview step returns the offset it was taken at
//     (StepOutcome.clockOffsetMs, absent for production issuers and for offset 0);
//   - each advance after that: the API signals `clockAdvanced` with the issuer's new offset to
//     every run waiting for a settlement (api/sandbox/clock.ts).
// The deadline on the issuer's clock is (wait start + offset at the start + time-out); on a
// signal the timer is replaced by one for what is left of it, or the wait ends at once.
//
// Replay safety: without a signal the wait is exactly the former `condition(ready, timeoutMs)`
// (one timer of the whole time-out), so no history changes. A signal received by code from
// before this change was dropped (no handler); the handler asks `patched()` first, which is
// false while replaying such a history, so the new code drops it too. Only runs that really
// take a clock signal record the patch marker: production purchases never do.
import { condition, patched, setHandler } from '@temporalio/workflow';
import { clockAdvancedSignal } from './lifecycle-signals';

export const SANDBOX_CLOCK_PATCH = 'sandbox-clock';

/** The issuer's clock offset as the run last heard it; undefined until a signal arrives. */
export interface IssuerClock {
  offsetMs: number | undefined;
}

/** Registers the clockAdvanced handler; offsets only grow, so an older one is ignored. */
export function followIssuerClock(): IssuerClock {
  const clock: IssuerClock = { offsetMs: undefined };
  setHandler(clockAdvancedSignal, ({ clockOffsetMs }) => {
    if (!patched(SANDBOX_CLOCK_PATCH)) return;
    if (!Number.isSafeInteger(clockOffsetMs) || clockOffsetMs < 0) return; // never trust a signal to stop the clock
    if (clock.offsetMs === undefined || clockOffsetMs > clock.offsetMs) clock.offsetMs = clockOffsetMs;
  });
  return clock;
}

/**
 * Waits until `ready()` (true) or until `timeoutMs` has passed on the issuer's clock (false),
 * counted from now, when the issuer's offset was `startOffsetMs`.
 */
export async function waitOnIssuerClock(
  ready: () => boolean,
  timeoutMs: number,
  clock: IssuerClock,
  startOffsetMs: number,
): Promise<boolean> {
  const startedAtMs = Date.now(); // workflow time
  for (;;) {
    const heard = clock.offsetMs;
    const skippedMs = Math.max(0, (heard ?? startOffsetMs) - startOffsetMs);
    const remainingMs = startedAtMs + timeoutMs - skippedMs - Date.now(); // workflow time
    if (remainingMs <= 0) return ready();
    const woke = await condition(() => ready() || clock.offsetMs !== heard, remainingMs);
    if (ready()) return true;
    if (!woke) return false;
    // The clock moved: go round and wait for what is left on it.
  }
}
