// The checks behind /readyz. Each dependency gets CHECK_TIMEOUT_MS and they run at once, so
// /readyz answers within about that whatever is down: a probe with a 2 s time-out sees a 503
// naming the dependency, never a time-out of its own (unbounded, an unreachable Temporal would
// hold the answer for as long as the gRPC client keeps retrying its connection).
import type { Connection } from '@temporalio/client';

export const CHECK_TIMEOUT_MS = 1_500;

export type CheckResult = 'ok' | 'unreachable' | 'timed_out';

/** `check`'s outcome within `timeoutMs`; a check still running then is left to finish unheeded. */
export async function checkWithin(check: () => Promise<unknown>, timeoutMs = CHECK_TIMEOUT_MS): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<CheckResult>((resolve) => {
    timer = setTimeout(() => resolve('timed_out'), timeoutMs);
  });
  const outcome = check().then(
    (): CheckResult => 'ok',
    (): CheckResult => 'unreachable',
  );
  try {
    return await Promise.race([outcome, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Temporal's readiness: GetSystemInfo under a gRPC deadline, so the call itself is cancelled
 * rather than left retrying behind the timer of checkWithin.
 */
export function temporalProbe(connection: Connection, timeoutMs = CHECK_TIMEOUT_MS): () => Promise<void> {
  return async () => {
    await connection.withDeadline(Date.now() + timeoutMs, () => connection.workflowService.getSystemInfo({}));
  };
}
