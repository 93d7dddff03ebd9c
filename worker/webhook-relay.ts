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
  const relay = new OutboxRelay(deps, { ...DEFAULT_RELAY_OPTIONS, ...overrides });
  return {
    claimMs: relay.options.claimMs,
    take: (row) => relay.take(row),
    stop: () => relay.stop(),
  };
}

type QueuedRow = OutboxRow & { claimedAtMs: number };

/**
 * One relay's state: the rows it holds (waiting for a slot or in flight), the loop that claims
 * more when notified or polled, and the timer that renews the claims of what it holds.
 */
class OutboxRelay {
  // Per issuer, claimed and waiting for a slot, with when the claim began.
  private readonly queued = new Map<string, QueuedRow[]>();
  private readonly inFlight = new Map<string, number>();
  private readonly inFlightIds = new Set<string>();
  private readonly running = new Set<Promise<void>>();
  // When every claim this relay held was last extended (performance.now()).
  private renewedAtMs = -Infinity;
  private total = 0;
  private stopping = false;
  private dirty = true;
  private wake: (() => void) | undefined;
  private readonly listener: Listener;
  private readonly renewal: NodeJS.Timeout;
  private readonly loop: Promise<void>;

  constructor(
    private readonly deps: RelayDeps,
    readonly options: RelayOptions,
  ) {
    this.listener = listen(deps.databaseUrl, OUTBOX_CHANNEL, { onNotify: () => this.nudge() }, deps.logger);
    // Every row held (waiting for a slot or in flight) keeps its claim while this process lives.
    this.renewal = setInterval(() => this.renew(), options.renewMs);
    this.renewal.unref();
    this.loop = this.claimUntilStopped();
  }

  take(row: OutboxRow): void {
    // A stopping relay leaves the row to its claim's expiry and the next relay.
    if (this.stopping) return;
    this.enqueue(row);
    this.dispatch();
  }

  /** Stops claiming, waits for the attempts in flight, gives back what was claimed but not started. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.loop;
    await Promise.allSettled([...this.running]);
    clearInterval(this.renewal);
    const unstarted = this.queuedIds();
    this.queued.clear();
    await unclaim(this.deps.db, unstarted).catch(() => undefined);
    await this.listener.close();
  }

  private nudge(): void {
    this.dirty = true;
    this.wake?.();
  }

  private enqueue(row: OutboxRow): void {
    const rows = this.queued.get(row.issuerId) ?? [];
    this.queued.set(row.issuerId, [...rows, { ...row, claimedAtMs: performance.now() }]);
  }

  private queuedIds(): string[] {
    return [...this.queued.values()].flat().map((row) => row.id);
  }

  private held(issuerId: string): number {
    return (this.queued.get(issuerId)?.length ?? 0) + (this.inFlight.get(issuerId) ?? 0);
  }

  private async claimUntilStopped(): Promise<void> {
    while (!this.stopping) {
      if (this.dirty) {
        this.dirty = false;
        try {
          await this.claim();
        } catch (err) {
          this.deps.logger.warn({ err }, 'webhook relay could not claim; retrying');
        }
        this.dispatch();
      }
      if (this.dirty || this.stopping) continue;
      await this.nextWake();
      this.wake = undefined;
    }
  }

  /** Resolves on a nudge, or after the poll interval (which marks the relay dirty). */
  private nextWake(): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.dirty = true;
        resolve();
      }, this.options.pollMs);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private async claim(): Promise<void> {
    const { concurrency, perIssuer, claimMs } = this.options;
    const room = concurrency - this.total - [...this.queued.values()].reduce((n, rows) => n + rows.length, 0);
    if (room <= 0) return;
    const busy = new Set(
      [...this.queued.keys(), ...this.inFlight.keys()].filter((issuerId) => this.held(issuerId) >= perIssuer),
    );
    const rows = await claimOutbox(this.deps.db, { limit: room, perIssuer, claimMs, skipIssuers: [...busy] });
    for (const row of rows) this.enqueue(row);
    // A full claim means more may be waiting: look again without waiting for a notification.
    if (rows.length === room) this.dirty = true;
  }

  private dispatch(): void {
    const { concurrency, perIssuer, claimMs } = this.options;
    for (const [issuerId, rows] of this.queued) {
      while (rows.length > 0 && this.total < concurrency && (this.inFlight.get(issuerId) ?? 0) < perIssuer) {
        const row = rows.shift()!;
        // Waited so long behind a slow receiver that the claim may lapse while sending: leave
        // it to the table (its claim expires, then a relay claims it) rather than risk a
        // second relay sending it too.
        if (performance.now() - Math.max(row.claimedAtMs, this.renewedAtMs) > claimMs / 2) continue;
        this.send(issuerId, row);
      }
      if (rows.length === 0) this.queued.delete(issuerId);
    }
  }

  /** Starts one row's first attempt, counted in flight until it settles. */
  private send(issuerId: string, row: OutboxRow): void {
    this.total++;
    this.inFlight.set(issuerId, (this.inFlight.get(issuerId) ?? 0) + 1);
    this.inFlightIds.add(row.id);
    const done = relayOne(this.deps, row, this.options.retryInMs).finally(() => {
      this.total--;
      this.inFlightIds.delete(row.id);
      this.inFlight.set(issuerId, this.inFlight.get(issuerId)! - 1);
      if (this.inFlight.get(issuerId) === 0) this.inFlight.delete(issuerId);
      this.running.delete(done);
      this.nudge();
    });
    this.running.add(done);
  }

  private renew(): void {
    const ids = [...this.inFlightIds, ...this.queuedIds()];
    const startedMs = performance.now();
    renewClaims(this.deps.db, ids, this.options.claimMs).then(
      () => (this.renewedAtMs = startedMs),
      (err: unknown) => this.deps.logger.warn({ err }, 'webhook relay could not renew its claims; retrying'),
    );
  }
}

/**
 * One row's first attempt; a failed one is handed to its WebhookDelivery workflow. Never
 * throws: a relay that fails mid-way (Temporal down) gives the row back to be tried again.
 */
async function relayOne(deps: RelayDeps, row: OutboxRow, retryInMs: number): Promise<void> {
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
    await releaseClaim(deps.db, [row.id], retryInMs).catch(() => undefined);
  }
}
