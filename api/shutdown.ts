// How one API process stops on SIGTERM or SIGINT, in this order (docs/operating/runbook.md, "Shutdown and probes"):
// 1. draining starts: /readyz answers 503 `draining` at once, and every response from now on
//    carries `Connection: close`, so clients open their next connection elsewhere;
// 2. SHUTDOWN_DRAIN_DELAY passes with the port still open: a load balancer probing /readyz
//    takes the process out of rotation, and what it still sends meanwhile is served;
// 3. the port closes (no new connections) and idle keep-alive connections are closed;
// 4. requests in flight finish within API_SHUTDOWN_GRACE; connections still open then are cut;
// 5. the hand-over queue drains within HANDOVER_DRAIN_MS; what it leaves, the sweeper hands over;
// 6. the pools and connections close within CLOSE_MS.
// The process exits 0 after step 6, or 1 if the whole takes longer than shutdownBoundMs.
import type { Server } from 'node:http';
import type { Logger } from '../core/logger';
import type { Draining } from './draining';
import type { Handover } from './ingestion/handover-queue';

export const HANDOVER_DRAIN_MS = 5_000;
export const CLOSE_MS = 2_000;
/** How often idle connections are closed while requests finish (step 4). */
const IDLE_SWEEP_MS = 100;

export interface ShutdownPlan {
  server: Server;
  draining: Draining;
  handover?: Handover;
  /** Step 6: the database pool, the LISTEN connection, the Temporal connection. */
  close(): Promise<unknown>;
  logger: Logger;
  drainDelayMs: number;
  graceMs: number;
}

/** The longest a stop may take before the process gives up and exits 1. */
export function shutdownBoundMs(plan: Pick<ShutdownPlan, 'drainDelayMs' | 'graceMs'>): number {
  return plan.drainDelayMs + plan.graceMs + HANDOVER_DRAIN_MS + CLOSE_MS;
}

/** Runs the steps, then exits the process (0, or 1 past the bound). Later calls do nothing. */
export function stopApi(plan: ShutdownPlan, signal: string): void {
  // A second signal, or SIGTERM and the cluster primary's disconnect together: one stop.
  if (plan.draining.active) return;
  plan.logger.info({ signal, drainDelayMs: plan.drainDelayMs, graceMs: plan.graceMs }, 'API shutting down: draining');
  setTimeout(
    () => {
      plan.logger.error({ boundMs: shutdownBoundMs(plan) }, 'API shutdown took too long; exiting');
      process.exit(1);
    },
    shutdownBoundMs(plan) + 500,
  ).unref();
  shutDown(plan).then(
    () => {
      plan.logger.info('API stopped');
      process.exit(0);
    },
    (err) => {
      plan.logger.error({ err }, 'API shutdown failed');
      process.exit(1);
    },
  );
}

export async function shutDown(plan: ShutdownPlan): Promise<void> {
  const { server, logger } = plan;
  plan.draining.start();
  server.on('request', (_req, res) => res.setHeader('Connection', 'close'));
  await sleep(plan.drainDelayMs);

  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  // A keep-alive connection whose request was in flight at close becomes idle after it.
  const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
  const finished = await within(closed, plan.graceMs);
  clearInterval(sweep);
  if (!finished) {
    logger.warn(
      { graceMs: plan.graceMs },
      'requests still in flight after API_SHUTDOWN_GRACE; cutting their connections',
    );
    server.closeAllConnections();
  }
  logger.info('API port closed, requests finished');

  if (plan.handover && !(await within(plan.handover.drain(), HANDOVER_DRAIN_MS))) {
    logger.warn({ boundMs: HANDOVER_DRAIN_MS }, 'hand-over not finished; the sweeper hands over the rest');
  }
  await within(plan.close(), CLOSE_MS);
}

/** Whether `work` settled within `ms`. */
async function within(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
