// The webhook relay: runs in every worker process and delivers the first attempt of each
// webhook straight from the outbox (activities/webhooks/outbox.ts). A webhook written by a step
// of this process comes to it directly after the commit, already claimed (`take`); any other
// (written elsewhere, or left by a relay that died) is claimed from the table, woken by the
// NOTIFY of the transaction that wrote it or by the poll. A webhook delivered on its first attempt costs Temporal
// nothing; one whose first attempt fails is handed to its own WebhookDelivery workflow
// (webhook/<evt id>), which runs the rest of the retry schedule as durable timers, every
// attempt recorded, inspectable and replayable in the UI.
//
// Nothing is lost when a relay dies: a claimed row whose relay never finished is claimed
// again when its claim expires. Claims are short (10 s) and renewed every 3 s while the relay
// holds the row, so a dead relay's rows go to another relay (or to the same worker restarted)
// within seconds; a claim long enough to outlast any attempt unrenewed would keep them for a
// minute (docs/decisions/0020-recovery-in-seconds.md).
// The attempt record of a first attempt that was already
// made is reused rather than sent again (attempts are idempotent per webhook and number).
// Bounded everywhere: first attempts in flight per process and per issuer, rows per claim,
// and the wait between polls when no notification arrives.
import type { Db } from '../prisma/client';
import type { Logger } from '../core/logger';
import type { WorkflowEngine } from '../core/workflow-engine';
import type { WebhookDestinations } from '../core/webhooks/destination-guard';
import type { KeyRing } from '../core/crypto/key-ring';
import { listen, type Listener } from '../prisma/listen';
import { webhookFirstAttemptsResent } from '../core/metrics';
import {
  claimOutbox,
  markRelayed,
  OUTBOX_CHANNEL,
  releaseClaim,
  renewClaims,
  unclaim,
  type LocalRelay,
  type OutboxRow,
} from '../activities/webhooks/outbox';
import { attemptAndRecord, resultOf } from '../activities/webhooks/attempt';
import { startDeliveryRetries } from '../activities/webhooks/start-delivery';

export interface RelayOptions {
  /** First attempts in flight in this process. */
  concurrency: number;
  /** ... of one issuer: a slow receiver holds at most this many slots. */
  perIssuer: number;
  /** How long a claim holds unless renewed: how long a dead relay's rows wait for another. */
  claimMs: number;
  /** How often the relay extends the claims of the rows it holds; well inside claimMs. */
  renewMs: number;
  /** Poll interval when no notification comes (the listener was down, or a claim expired). */
  pollMs: number;
  /** A row whose relay failed mid-way (Temporal down) is tried again after this. */
  retryInMs: number;
}

export const DEFAULT_RELAY_OPTIONS: RelayOptions = {
  concurrency: 32,
  perIssuer: 8,
  claimMs: 10_000,
  renewMs: 3_000,
  pollMs: 2_000,
  retryInMs: 5_000,
};

export interface RelayDeps {
  db: Db;
  logger: Logger;
  clock: { now(): Date };
  databaseUrl: string;
  /** Where failing webhooks' delivery workflows start, with the configured retry schedule. */
  temporal: WorkflowEngine;
  /** Where webhooks may go, checked before every attempt (core/webhooks/destination-guard.ts). */
  webhookDestinations: WebhookDestinations;
  /** WEBHOOK_SECRET_KEYS: opens the endpoints' sealed signing secrets. */
  webhookSecretKeys: KeyRing;
  /** Tests only: a shorter HTTP time-out than the contract's 10 s. */
  webhookAttemptTimeoutMs?: number;
}

export interface WebhookRelay extends LocalRelay {
  /** Stops claiming, waits for the attempts in flight, gives back what was claimed but not started. */
  stop(): Promise<void>;
}

export function startWebhookRelay(deps: RelayDeps, overrides: Partial<RelayOptions> = {}): WebhookRelay {
  const options = { ...DEFAULT_RELAY_OPTIONS, ...overrides };
  // Per issuer, claimed and waiting for a slot, with when the claim began.
  const queued = new Map<string, Array<OutboxRow & { claimedAtMs: number }>>();
  const enqueue = (row: OutboxRow) =>
    queued.set(row.issuerId, [...(queued.get(row.issuerId) ?? []), { ...row, claimedAtMs: performance.now() }]);
  const inFlight = new Map<string, number>();
  const inFlightIds = new Set<string>();
  const running = new Set<Promise<void>>();
  // When every claim this relay held was last extended (performance.now()).
  let renewedAtMs = -Infinity;
  let total = 0;
  let stopping = false;
  let dirty = true;
  let wake: (() => void) | undefined;
  const nudge = () => {
    dirty = true;
    wake?.();
  };
  const listener: Listener = listen(deps.databaseUrl, OUTBOX_CHANNEL, { onNotify: nudge }, deps.logger);

  const held = (issuerId: string) => (queued.get(issuerId)?.length ?? 0) + (inFlight.get(issuerId) ?? 0);

  async function relayOne(row: OutboxRow): Promise<void> {
    const nextAttemptInMs = deps.temporal.settings.webhookRetryScheduleMs[0] ?? null;
    const input = { webhookId: row.id, attemptNumber: 1, nextAttemptInMs, replay: false };
    try {
      // The usual path is one statement after the claim: the attempt's record marks the row
      // relayed when no workflow is needed. A first attempt made before (its relay died) is
      // taken as recorded, never sent again.
      const recorded = row.state.recorded;
      if (row.claimedBefore && !recorded) webhookFirstAttemptsResent.inc();
      const result = recorded ? resultOf(recorded) : await attemptAndRecord(deps, row.state, input, true);
      if (result.outcome === 'failed' && nextAttemptInMs !== null) {
        await startDeliveryRetries(deps.temporal, {
          ...row.state.webhook,
          sourceEventId: row.sourceEventId,
          data: row.state.webhook.data as never,
        });
        await markRelayed(deps.db, row.id, deps.clock.now());
      } else if (recorded) {
        await markRelayed(deps.db, row.id, deps.clock.now());
      }
    } catch (err) {
      deps.logger.warn({ err, webhookId: row.id }, 'webhook relay failed; the row is tried again');
      await releaseClaim(deps.db, [row.id], options.retryInMs).catch(() => undefined);
    }
  }

  function dispatch(): void {
    for (const [issuerId, rows] of queued) {
      while (rows.length > 0 && total < options.concurrency && (inFlight.get(issuerId) ?? 0) < options.perIssuer) {
        const row = rows.shift()!;
        // Waited so long behind a slow receiver that the claim may lapse while sending: leave
        // it to the table (its claim expires, then a relay claims it) rather than risk a
        // second relay sending it too.
        if (performance.now() - Math.max(row.claimedAtMs, renewedAtMs) > options.claimMs / 2) continue;
        total++;
        inFlight.set(issuerId, (inFlight.get(issuerId) ?? 0) + 1);
        inFlightIds.add(row.id);
        const done = relayOne(row).finally(() => {
          total--;
          inFlightIds.delete(row.id);
          inFlight.set(issuerId, inFlight.get(issuerId)! - 1);
          if (inFlight.get(issuerId) === 0) inFlight.delete(issuerId);
          running.delete(done);
          nudge();
        });
        running.add(done);
      }
      if (rows.length === 0) queued.delete(issuerId);
    }
  }

  async function claim(): Promise<void> {
    const room = options.concurrency - total - [...queued.values()].reduce((n, rows) => n + rows.length, 0);
    if (room <= 0) return;
    const busy = new Set(
      [...queued.keys(), ...inFlight.keys()].filter((issuerId) => held(issuerId) >= options.perIssuer),
    );
    const rows = await claimOutbox(deps.db, {
      limit: room,
      perIssuer: options.perIssuer,
      claimMs: options.claimMs,
      skipIssuers: [...busy],
    });
    for (const row of rows) enqueue(row);
    // A full claim means more may be waiting: look again without waiting for a notification.
    if (rows.length === room) dirty = true;
  }

  // Every row held (waiting for a slot or in flight) keeps its claim while this process lives.
  const renewal = setInterval(() => {
    const ids = [...inFlightIds, ...[...queued.values()].flat().map((row) => row.id)];
    const startedMs = performance.now();
    renewClaims(deps.db, ids, options.claimMs).then(
      () => (renewedAtMs = startedMs),
      (err: unknown) => deps.logger.warn({ err }, 'webhook relay could not renew its claims; retrying'),
    );
  }, options.renewMs);
  renewal.unref();

  const loop = (async () => {
    while (!stopping) {
      if (dirty) {
        dirty = false;
        try {
          await claim();
        } catch (err) {
          deps.logger.warn({ err }, 'webhook relay could not claim; retrying');
        }
        dispatch();
      }
      if (dirty || stopping) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          dirty = true;
          resolve();
        }, options.pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  })();

  return {
    claimMs: options.claimMs,
    take(row) {
      // A stopping relay leaves the row to its claim's expiry and the next relay.
      if (stopping) return;
      enqueue(row);
      dispatch();
    },
    async stop() {
      stopping = true;
      wake?.();
      await loop;
      await Promise.allSettled([...running]);
      clearInterval(renewal);
      const unstarted = [...queued.values()].flat().map((row) => row.id);
      queued.clear();
      await unclaim(deps.db, unstarted).catch(() => undefined);
      await listener.close();
    },
  };
}
