// The webhook relay: runs in every worker process and makes the relayed attempt of each
// webhook delivery (one per webhook and endpoint; the first attempt, or the first after a
// recover) straight from the outbox (activities/webhooks/outbox.ts). Deliveries written by a
// step of this process come to it directly after the commit, already claimed (`take`); any
// other (written elsewhere, reopened by recover, or left by a relay that died) is claimed from
// the table, woken by the NOTIFY of the transaction that wrote it or by the poll. A delivery
// made on its first attempt costs Temporal nothing; one whose attempt fails is handed to its
// own WebhookDelivery workflow (webhook/<evt id>/<whe id>), which runs the rest of the retry
// schedule as durable timers, every attempt recorded, inspectable and replayable in the UI.
//
// Nothing is lost when a relay dies: a claimed delivery whose relay never finished is claimed
// again when its claim expires. Claims are short (10 s) and renewed every 3 s while the relay
// holds the delivery, so a dead relay's deliveries go to another relay (or to the same worker
// restarted) within seconds (docs/decisions/0020-recovery-in-seconds.md). The attempt record
// of an attempt that was already made is reused rather than sent again (attempts are
// idempotent per delivery and number).
//
// Fair between endpoints (docs/decisions/0029-webhook-deliveries-per-endpoint.md): at most
// `perEndpoint` attempts of one endpoint in flight in this process, and no more than its
// `rateLimitPerSecond` when it has one; a claim takes a few deliveries of each endpoint with
// work waiting, so an endpoint that hangs holds its own slots and its backlog waits in the
// table, while every other endpoint's deliveries go out beside it. An endpoint whose last five
// attempts failed is tripped (core/webhooks/endpoint-health.ts): one probe at a time, one per
// 30 s, until one succeeds, so a dead receiver does not start a retry run per webhook. The relay
// learns it from the record of its own failed attempt and at once gives back the deliveries it
// holds for the endpoint, and sends none of those its steps write for it meanwhile: they wait in
// the table until a probe succeeds, and a hanging receiver gets no new first attempts from what
// the relay held in memory. Bounded everywhere:
// attempts in flight per process and per endpoint, deliveries per claim, and the wait between
// polls when no notification arrives.
import { withTraceparent } from '../core/tracing';
import type { Db } from '../prisma/client';
import type { Logger } from '../core/logger';
import type { WorkflowEngine } from '../core/workflow-engine';
import type { WebhookDestinations } from '../core/webhooks/destination-guard';
import type { KeyRing } from '../core/crypto/key-ring';
import { listen, type Listener } from '../prisma/listen';
import type { DatabaseTimeouts } from '../prisma/bounded-client';
import { webhookFirstAttemptsResent } from '../core/metrics';
import {
  claimOutbox,
  markRelayed,
  OUTBOX_CHANNEL,
  releaseClaim,
  renewClaims,
  unclaim,
  type DeliveryKey,
  isTripped,
  type LocalRelay,
  type OutboxRow,
} from '../activities/webhooks/outbox';
import {
  attemptAndRecord,
  isSkipped,
  resultOf,
  skipDelivery,
  type RecordedResult,
} from '../activities/webhooks/attempt';
import { TRIP_AFTER_FAILURES } from '../core/webhooks/endpoint-health';
import { startDeliveryRetries } from '../activities/webhooks/start-delivery';
import { RateGate } from './rate-gate';

export interface RelayOptions {
  /** Attempts in flight in this process. */
  concurrency: number;
  /** ... to one endpoint: a slow or hanging receiver holds at most this many slots. */
  perEndpoint: number;
  /** How long a claim holds unless renewed: how long a dead relay's deliveries wait for another. */
  claimMs: number;
  /** How often the relay extends the claims of the deliveries it holds; well inside claimMs. */
  renewMs: number;
  /** Poll interval when no notification comes (the listener was down, or a claim expired). */
  pollMs: number;
  /** A delivery whose relay failed mid-way (Temporal down) is tried again after this. */
  retryInMs: number;
}

export const DEFAULT_RELAY_OPTIONS: RelayOptions = {
  concurrency: 32,
  perEndpoint: 4,
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
  /** The bounds of the LISTEN connection, as of the pool's (prisma/bounded-client.ts); defaults without. */
  databaseTimeouts?: DatabaseTimeouts;
  /** Where failing deliveries' workflows start, with the configured retry schedule. */
  temporal: WorkflowEngine;
  /** Where webhooks may go, checked before every attempt (core/webhooks/destination-guard.ts). */
  webhookDestinations: WebhookDestinations;
  /** WEBHOOK_SECRET_KEYS: opens the endpoints' sealed signing secrets. */
  webhookSecretKeys: KeyRing;
  /** WEBHOOK_ENDPOINT_DISABLE_AFTER (null: never). */
  webhookEndpointDisableAfterMs?: number | null;
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

const keyOf = (row: DeliveryKey): DeliveryKey => ({ webhookId: row.webhookId, endpointId: row.endpointId });

/**
 * One relay's state: the deliveries it holds per endpoint (waiting for a slot or in flight),
 * the loop that claims more when notified or polled, and the timer that renews the claims of
 * what it holds.
 */
class OutboxRelay {
  // Per endpoint, claimed and waiting for a slot, with when the claim began.
  private readonly queued = new Map<string, QueuedRow[]>();
  private readonly inFlight = new Map<string, number>();
  private readonly inFlightRows = new Map<string, DeliveryKey>();
  private readonly running = new Set<Promise<void>>();
  private readonly rates = new RateGate();
  // Endpoints whose last claimed delivery showed them tripped: one attempt at a time.
  private readonly tripped = new Set<string>();
  // When every claim this relay held was last extended (performance.now()).
  private renewedAtMs = -Infinity;
  private total = 0;
  private stopping = false;
  private dirty = true;
  private wake: (() => void) | undefined;
  private paced: NodeJS.Timeout | undefined;
  private readonly listener: Listener;
  private readonly renewal: NodeJS.Timeout;
  private readonly loop: Promise<void>;

  constructor(
    private readonly deps: RelayDeps,
    readonly options: RelayOptions,
  ) {
    this.listener = listen(
      deps.databaseUrl,
      OUTBOX_CHANNEL,
      { onNotify: () => this.nudge() },
      deps.logger,
      deps.databaseTimeouts,
    );
    // Every delivery held (waiting for a slot or in flight) keeps its claim while this process lives.
    this.renewal = setInterval(() => this.renew(), options.renewMs);
    this.renewal.unref();
    this.loop = this.claimUntilStopped();
  }

  take(row: OutboxRow): void {
    // A stopping relay leaves the delivery to its claim's expiry and the next relay.
    if (this.stopping) return;
    // Written by a step that read the endpoint before this relay saw it trip: to the table.
    if (this.tripped.has(row.endpointId)) {
      this.giveBack([keyOf(row)]);
      return;
    }
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
    clearTimeout(this.paced);
    const unstarted = this.queuedKeys();
    this.queued.clear();
    await unclaim(this.deps.db, unstarted).catch(() => undefined);
    await this.listener.close();
  }

  private nudge(): void {
    this.dirty = true;
    this.wake?.();
  }

  private enqueue(row: OutboxRow): void {
    const rows = this.queued.get(row.endpointId) ?? [];
    this.queued.set(row.endpointId, [...rows, { ...row, claimedAtMs: performance.now() }]);
  }

  /**
   * What an attempt's record says of its endpoint: a success ends a trip; a failure that made
   * the endpoint tripped (core/webhooks/endpoint-health.ts) gives back every delivery held for it
   * and not yet started, so that the endpoint gets nothing but probes until one succeeds.
   */
  private learn(endpointId: string, result: RecordedResult | undefined): void {
    if (result?.outcome === 'succeeded') {
      this.tripped.delete(endpointId);
      return;
    }
    if ((result?.endpointFailures ?? 0) < TRIP_AFTER_FAILURES) return;
    this.tripped.add(endpointId);
    const held = this.queued.get(endpointId) ?? [];
    this.queued.delete(endpointId);
    this.giveBack(held.map(keyOf));
  }

  /** Deliveries back to the table, free for any relay's claim at once (its probe rule included). */
  private giveBack(keys: DeliveryKey[]): void {
    if (keys.length === 0) return;
    unclaim(this.deps.db, keys).catch((err: unknown) =>
      this.deps.logger.warn({ err }, 'webhook relay could not give back deliveries; their claims expire instead'),
    );
  }

  private queuedKeys(): DeliveryKey[] {
    return [...this.queued.values()].flat().map(keyOf);
  }

  /** Attempts of the endpoint this relay may have in flight. */
  private slotsOf(endpointId: string): number {
    return this.tripped.has(endpointId) ? 1 : this.options.perEndpoint;
  }

  private held(endpointId: string): number {
    return (this.queued.get(endpointId)?.length ?? 0) + (this.inFlight.get(endpointId) ?? 0);
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
    const { concurrency, perEndpoint, claimMs } = this.options;
    const room = concurrency - this.total - [...this.queued.values()].reduce((n, rows) => n + rows.length, 0);
    if (room <= 0) return;
    const busy = [...new Set([...this.queued.keys(), ...this.inFlight.keys()])].filter(
      (endpointId) => this.held(endpointId) >= this.slotsOf(endpointId),
    );
    const rows = await claimOutbox(this.deps.db, { limit: room, perEndpoint, claimMs, skipEndpoints: busy });
    for (const row of rows) {
      // A claim reads the endpoint's health as it is now: one probe of a tripped one, or a
      // recovered one (another relay's probe succeeded) at its full share again.
      if (isTripped(row.state.endpoint)) this.tripped.add(row.endpointId);
      else this.tripped.delete(row.endpointId);
      this.enqueue(row);
    }
    // A full claim means more may be waiting: look again without waiting for a notification.
    if (rows.length === room) this.dirty = true;
  }

  private dispatch(): void {
    const { concurrency, claimMs } = this.options;
    let nextTokenInMs = Infinity;
    for (const [endpointId, rows] of this.queued) {
      const slots = this.slotsOf(endpointId);
      while (rows.length > 0 && this.total < concurrency && (this.inFlight.get(endpointId) ?? 0) < slots) {
        const row = rows[0];
        // Waited so long behind a slow receiver that the claim may lapse while sending: leave
        // it to the table (its claim expires, then a relay claims it) rather than risk a
        // second relay sending it too.
        if (performance.now() - Math.max(row.claimedAtMs, this.renewedAtMs) > claimMs / 2) {
          rows.shift();
          continue;
        }
        const waitMs = this.rates.take(endpointId, row.state.endpoint?.rateLimitPerSecond ?? null);
        if (waitMs > 0) {
          nextTokenInMs = Math.min(nextTokenInMs, waitMs);
          break;
        }
        this.send(rows.shift()!);
      }
      if (rows.length === 0) this.queued.delete(endpointId);
    }
    if (nextTokenInMs !== Infinity && !this.paced) {
      this.paced = setTimeout(() => {
        this.paced = undefined;
        this.dispatch();
      }, nextTokenInMs);
    }
  }

  /** Starts one delivery's attempt, counted in flight until it settles. */
  private send(row: OutboxRow): void {
    const { endpointId } = row;
    const id = `${row.webhookId}/${endpointId}`;
    this.total++;
    this.inFlight.set(endpointId, (this.inFlight.get(endpointId) ?? 0) + 1);
    this.inFlightRows.set(id, keyOf(row));
    const done = relayOne(this.deps, row, this.options.retryInMs).then((result) => {
      this.learn(endpointId, result);
      this.total--;
      this.inFlightRows.delete(id);
      this.inFlight.set(endpointId, this.inFlight.get(endpointId)! - 1);
      if (this.inFlight.get(endpointId) === 0) this.inFlight.delete(endpointId);
      this.running.delete(done);
      this.nudge();
    });
    this.running.add(done);
  }

  private renew(): void {
    const keys = [...this.inFlightRows.values(), ...this.queuedKeys()];
    const startedMs = performance.now();
    renewClaims(this.deps.db, keys, this.options.claimMs).then(
      () => (this.renewedAtMs = startedMs),
      (err: unknown) => this.deps.logger.warn({ err }, 'webhook relay could not renew its claims; retrying'),
    );
  }
}

/**
 * One delivery's attempt; a failed one is handed to its WebhookDelivery workflow. Returns the
 * attempt's result when one was made. Never throws: a relay that fails mid-way (Temporal down)
 * gives the delivery back to be tried again.
 */
async function relayOne(deps: RelayDeps, row: OutboxRow, retryInMs: number): Promise<RecordedResult | undefined> {
  const nextAttemptInMs = deps.temporal.settings.webhookRetryScheduleMs[0] ?? null;
  const input = {
    webhookId: row.webhookId,
    endpointId: row.endpointId,
    attemptNumber: row.attemptNumber,
    nextAttemptInMs,
    replay: false,
  };
  try {
    if (isSkipped(row.state)) {
      await skipDelivery(deps.db, input, deps.clock.now());
      return undefined;
    }
    // The usual path is one statement after the claim: the attempt's record marks the delivery
    // relayed when no workflow is needed. An attempt made before (its relay died) is taken as
    // recorded, never sent again.
    const recorded = row.state.recorded;
    if (row.claimedBefore && !recorded) webhookFirstAttemptsResent.inc();
    // In the trace of the step that wrote the webhook, with the retries it may start (core/tracing.ts).
    const traced = <T>(fn: () => Promise<T>) => withTraceparent(row.state.webhook.traceparent, fn);
    const result = recorded ? resultOf(recorded) : await traced(() => attemptAndRecord(deps, row.state, input, true));
    if (result.outcome === 'failed' && nextAttemptInMs !== null) {
      await traced(() =>
        startDeliveryRetries(deps.temporal, {
          ...row.state.webhook,
          endpointId: row.endpointId,
          attemptNumber: row.attemptNumber,
          sourceEventId: row.sourceEventId,
          data: row.state.webhook.data as never,
        }),
      );
      await markRelayed(deps.db, row, deps.clock.now());
    } else if (recorded) {
      await markRelayed(deps.db, row, deps.clock.now());
    }
    return result;
  } catch (err) {
    deps.logger.warn(
      { err, webhookId: row.webhookId, endpointId: row.endpointId },
      'webhook relay failed; the delivery is tried again',
    );
    await releaseClaim(deps.db, [keyOf(row)], retryInMs).catch(() => undefined);
    return undefined;
  }
}
