// The hand-over under faults, tried as an operator would: the real API process killed right
// after answering 204 to 1,000 settled events, then the sweeper; and a repeated hand-over of
// a purchase whose workflow has finished. Every purchase must end with exactly one run.
import { randomUUID } from 'node:crypto';
import assert from 'node:assert/strict';
import { FINAL_STATUSES, startStack, TEST_HANDOVER_MAX_IN_FLIGHT, type Stack } from '../helpers/stack';
import type { TestIssuer } from '../helpers/app';
import { authEvent, settledEvent, storedEvent, type CardRef } from '../helpers/events';
import { purchaseScenario } from '../helpers/scenario';
import { assertLedgerHealthy } from '../helpers/ledger';
import { spawnApi, waitForReady } from '../helpers/api-process';
import { freePort } from '../helpers/ports';
import { createSweepActivities } from '../../activities/sweeper';
import { Client, Connection } from '@temporalio/client';
import { startTestApp } from '../helpers/app';
import { testEngine } from '../helpers/engine';
import { createApiHandover } from '../../api/ingestion/handover-queue';
import { createHandoverRelease } from '../../worker/handover-release';
import { createDb } from '../../prisma/client';
import { startSilentProxy } from '../helpers/silent-proxy';
import type { WorkflowInfo } from '@temporalio/workflow';
import type { HandoverItem } from '../../core/domain/handover';
import { createLogger } from '../../core/logger';
import { admitStored, holdingPlace, readmitRefused, RELEASE_HOLD_MS } from '../../core/domain/handover-admission';
import { EventEmitter } from 'node:events';
import type { Worker } from '@temporalio/worker';
import { coresdk } from '@temporalio/proto';
import { Prisma } from '../../prisma/generated/client';
import { sqlTransaction } from '../../prisma/sql-transaction';

describe('hand-over under faults', function () {
  this.timeout(300_000);
  let stack: Stack;
  let issuer: TestIssuer;
  let card: CardRef;
  let merchant: any;

  before(async () => {
    stack = await startStack();
    ({ issuer, card, merchant } = await purchaseScenario(stack.app, { offer: { cashbackRateBps: 200 } }));
  });
  after(() => stack.stop());
  afterEach(() => assertLedgerHealthy(stack.db, issuer.id));

  /** The sweeper as its schedule runs it, a minute later (past its 30 s grace). */
  const sweep = () =>
    createSweepActivities({
      db: stack.db,
      clock: { now: () => new Date(Date.now() + 60_000) },
      temporal: stack.engine,
      handoverMaxInFlight: TEST_HANDOVER_MAX_IN_FLIGHT,
    }).sweepHandovers({ olderThanMs: 30_000, limit: 5000 });
  const queued = (eventId: string) => stack.db.handoverPending.findUnique({ where: { eventId } });
  /** Runs of workflows whose id starts with the prefix, once visibility has caught up. */
  async function runsOf(prefix: string, expected: number): Promise<number> {
    const query = `WorkflowId STARTS_WITH "${prefix}"`;
    let count = 0;
    for (let i = 0; i < 100; i++) {
      count = (await stack.client.workflow.count(query)).count;
      if (count >= expected) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    await new Promise((r) => setTimeout(r, 1_000)); // a duplicate run would show up by now
    return (await stack.client.workflow.count(query)).count;
  }

  it('gives each of 1,000 purchases exactly one run after the API is killed right after its 204s', async () => {
    const port = await freePort();
    const api = spawnApi(port, stack.taskQueue);
    try {
      await waitForReady(`http://127.0.0.1:${port}`, api);
      const batches = Array.from({ length: 10 }, (_, b) =>
        Array.from({ length: 100 }, (_, i) =>
          settledEvent(card, { id: `kill-${b}-${i}-${randomUUID()}`, amount: 1_000 + i, merchantId: merchant.id }),
        ),
      );
      const statuses = await Promise.all(
        batches.map((events) =>
          fetch(`http://127.0.0.1:${port}/api/v1/incoming-txn`, {
            method: 'POST',
            headers: { authorization: `Bearer ${issuer.token}`, 'content-type': 'application/json' },
            body: JSON.stringify(events),
          }).then((r) => r.status),
        ),
      );
      api.kill('SIGKILL');
      assert.deepEqual(statuses, Array(10).fill(204));

      const ids = batches.flat().map((e) => e.id);
      const rows = () =>
        stack.db.ingestedEvent.findMany({ where: { issuerId: issuer.id, kind: 'settled', externalId: { in: ids } } });
      assert.equal((await rows()).length, 1000, 'every accepted event is stored');
      const swept = await sweep();
      assert.equal(swept.failed, 0);
      assert.ok(swept.handedOver > 0, `the kill left events for the sweeper: ${JSON.stringify(swept)}`);
      for (const row of await rows())
        assert.equal(await stack.waitForStatus(row.id, FINAL_STATUSES, 180_000), 'matched');
      // Every event leaves the hand-over queue.
      await stack.waitUntilReleased((await rows()).map((r) => r.id));
      assert.equal(await runsOf(`txn/${issuer.id}/kill-`, 1000), 1000, 'one run per purchase');
      const transfers = await stack.db.ledgerTransfer.groupBy({
        by: ['transactionId'],
        where: { transactionId: { in: (await rows()).map((r) => r.id) } },
        _count: true,
      });
      assert.equal(transfers.length, 1000);
      assert.ok(
        transfers.every((t) => t._count === 1),
        'one posting each',
      );
    } finally {
      api.kill('SIGKILL');
    }
  });

  it('does not start a second run when a finished purchase is handed over again', async () => {
    const event = settledEvent(card, { amount: 2_500, merchantId: merchant.id });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', event)).status, 204);
    const row = await storedEvent(stack.db, issuer.id, 'settled', event.id);
    assert.equal(await stack.waitForStatus(row.id, FINAL_STATUSES), 'matched');
    await stack.client.workflow.getHandle(row.workflowId).result();
    await stack.waitUntilReleased([row.id]);
    // The API died after the signal went out but before it took the event out of the queue.
    await stack.db.handoverPending.create({ data: { eventId: row.id, queuedAt: row.receivedAt } });

    const swept = await sweep();
    assert.ok(swept.alreadyProcessed >= 1, JSON.stringify(swept));
    assert.equal(await queued(row.id), null, 'dequeued, not signalled');
    assert.equal(await runsOf(row.workflowId, 1), 1);
  });

  it('leaves events accepted while Temporal is unreachable to the sweeper, through the real hand-over queue', async () => {
    // The API's own queue and hand-over, with a Temporal address where nothing listens.
    const deadTemporal = testEngine(
      new Client({ connection: Connection.lazy({ address: `127.0.0.1:${await freePort()}`, connectTimeout: 500 }) }),
      stack.taskQueue,
    );
    const failures: unknown[] = [];
    const logger = {
      ...createLogger('silent'),
      warn: (...args: unknown[]) => failures.push(args),
    } as unknown as ReturnType<typeof createLogger>;
    const queue = createApiHandover({ temporal: deadTemporal, db: stack.db }, logger, TEST_HANDOVER_MAX_IN_FLIGHT);
    const cut = await startTestApp({ db: stack.db, handover: queue });
    const events = Array.from({ length: 3 }, () => settledEvent(card, { amount: 1_000, merchantId: merchant.id }));
    try {
      assert.equal(
        (await cut.request('POST', '/api/v1/incoming-txn', { token: issuer.token, body: events })).status,
        204,
        'accepted: durably stored',
      );
      await queue.drain();
    } finally {
      await cut.close();
    }
    assert.ok(failures.length >= 1, 'the failed hand-over was logged');
    const rows = await stack.db.ingestedEvent.findMany({
      where: { issuerId: issuer.id, externalId: { in: events.map((e) => e.id) } },
    });
    assert.deepEqual(
      await Promise.all(rows.map(async (r) => [(await queued(r.id))?.attempts, r.rewardStatus])),
      rows.map(() => [1, 'pending']),
      'queued, one refused attempt each',
    );

    const swept = await sweep();
    assert.ok(swept.handedOver >= 3, JSON.stringify(swept));
    for (const row of rows) assert.equal(await stack.waitForStatus(row.id, FINAL_STATUSES), 'matched');
    const posted = await stack.db.ledgerTransfer.findMany({ where: { transactionId: { in: rows.map((r) => r.id) } } });
    assert.deepEqual(
      posted.map((t) => t.amountMinor),
      [20n, 20n, 20n],
      '2% of 1,000 each, once',
    );
  });
  it('hands over a batch that reached the admission before an older batch of its issuer, once that one went', async () => {
    // Concurrent requests of one issuer are stored in one order and may be admitted in another:
    // the newer batch, finding the older one waiting, must not be left for a watch (none runs here).
    const parked = { enqueue: () => undefined, drain: () => Promise.resolve() };
    const store = await startTestApp({ db: stack.db, handover: parked });
    const older = Array.from({ length: 3 }, () => settledEvent(card, { amount: 1_000, merchantId: merchant.id }));
    const newer = Array.from({ length: 3 }, () => settledEvent(card, { amount: 1_000, merchantId: merchant.id }));
    try {
      for (const events of [older, newer])
        assert.equal(
          (await store.request('POST', '/api/v1/incoming-txn', { token: issuer.token, body: events })).status,
          204,
        );
    } finally {
      await store.close();
    }
    const itemsOf = async (events: typeof older): Promise<HandoverItem[]> =>
      (
        await stack.db.ingestedEvent.findMany({
          where: { issuerId: issuer.id, externalId: { in: events.map((e) => e.id) } },
        })
      ).map((row) => ({ ...row, eventId: row.id, signal: 'settlement' as const }));
    const [olderItems, newerItems] = [await itemsOf(older), await itemsOf(newer)];

    const queue = createApiHandover({ temporal: stack.engine, db: stack.db }, createLogger('silent'), 100);
    queue.enqueue(newerItems);
    queue.enqueue(olderItems);
    await queue.drain();
    const ids = [...olderItems, ...newerItems].map((i) => i.eventId);
    for (const id of ids) assert.equal(await stack.waitForStatus(id, FINAL_STATUSES), 'matched');
    await stack.waitUntilReleased(ids);
  });

  it("leaves a batch behind its issuer's older backlog to the watch without the admission lock, and admits another issuer's", async () => {
    // A settlement file still waiting (received seconds before): the API's batch of the same issuer
    // can go only after it, so its admission must not queue for the lock that the watch's
    // admissions need, nor hold it while its process serves the next requests.
    const parked = { enqueue: () => undefined, drain: () => Promise.resolve() };
    const other = await purchaseScenario(stack.app, { offer: { cashbackRateBps: 200 } });
    const store = await startTestApp({ db: stack.db, handover: parked });
    const batch = (c: CardRef, merchantId: string) =>
      Array.from({ length: 3 }, () => settledEvent(c, { amount: 1_000, merchantId }));
    const [backlog, newer, others] = [
      batch(card, merchant.id),
      batch(card, merchant.id),
      batch(other.card, other.merchant.id),
    ];
    try {
      for (const [token, events] of [
        [issuer.token, backlog],
        [issuer.token, newer],
        [other.issuer.token, others],
      ] as const)
        assert.equal((await store.request('POST', '/api/v1/incoming-txn', { token, body: events })).status, 204);
    } finally {
      await store.close();
    }
    const itemsOf = async (issuerId: string, events: typeof backlog): Promise<HandoverItem[]> =>
      (await stack.db.ingestedEvent.findMany({ where: { issuerId, externalId: { in: events.map((e) => e.id) } } })).map(
        (row) => ({ ...row, eventId: row.id, signal: 'settlement' as const }),
      );
    const [backlogItems, newerItems, otherItems] = [
      await itemsOf(issuer.id, backlog),
      await itemsOf(issuer.id, newer),
      await itemsOf(other.issuer.id, others),
    ];
    await stack.db.$executeRaw`UPDATE handover_pending SET queued_at = queued_at - interval '5 seconds'
                                WHERE event_id = ANY(${backlogItems.map((i) => i.eventId)}::text[])`;
    const ids = (items: HandoverItem[]) => items.map((i) => i.eventId);

    let releaseLock!: () => void;
    const lockReleased = new Promise<void>((r) => (releaseLock = r));
    let lockTaken!: () => void;
    const lockHeld = new Promise<void>((r) => (lockTaken = r));
    const holder = sqlTransaction(stack.db, async (tx) => {
      await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtextextended('rewards.handover_admission', 0))`;
      lockTaken();
      await lockReleased;
    });
    try {
      await lockHeld;
      const admission = admitStored(stack.db, ids(newerItems), {
        maxInFlight: TEST_HANDOVER_MAX_IN_FLIGHT,
        now: new Date(),
      });
      const waited = new Promise<'waited for the lock'>((r) => setTimeout(() => r('waited for the lock'), 3_000));
      const outcome = await Promise.race([admission, waited]);
      assert.notEqual(outcome, 'waited for the lock', 'a batch behind a backlog queued for the admission lock');
      assert.deepEqual(outcome, { admitted: new Set(), behindOlder: [] }, 'left to the watch, no retries');
    } finally {
      releaseLock();
      await holder;
    }

    const queue = createApiHandover({ temporal: stack.engine, db: stack.db }, createLogger('silent'), 100);
    queue.enqueue([...newerItems, ...otherItems]);
    await queue.drain();
    for (const id of ids(otherItems)) assert.equal(await stack.waitForStatus(id, FINAL_STATUSES), 'matched');
    for (const id of ids(newerItems))
      assert.equal((await queued(id))?.admittedAt, null, 'still waiting behind the older backlog');
    // As the watch would: the backlog first, then what waited behind it.
    queue.enqueue(backlogItems);
    await queue.drain();
    queue.enqueue(newerItems);
    await queue.drain();
    const all = ids([...backlogItems, ...newerItems, ...otherItems]);
    for (const id of all) assert.equal(await stack.waitForStatus(id, FINAL_STATUSES), 'matched');
    await stack.waitUntilReleased(all);
    await assertLedgerHealthy(stack.db, other.issuer.id);
  });

  it('hands over a reversal the API could not, though its authorization was already previewed', async () => {
    const auth = authEvent(card, { amount: 4_000, merchantId: merchant.id });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-auth', auth)).status, 204);
    const row = await storedEvent(stack.db, issuer.id, 'auth', auth.id);
    assert.equal(await stack.waitForStatus(row.id, ['previewed']), 'previewed');
    await stack.waitUntilReleased([row.id]);
    // The reversal is recorded and queued, as the API does, but its own hand-over never happens.
    const reversedAt = new Date(Date.now() - 1_000);
    await stack.db.$transaction([
      stack.db.ingestedEvent.update({ where: { id: row.id }, data: { state: 'reversed', stateChangedAt: reversedAt } }),
      stack.db.handoverPending.create({ data: { eventId: row.id, queuedAt: reversedAt } }),
    ]);

    const swept = await sweep();
    assert.ok(swept.handedOver >= 1, `a previewed authorization's reversal still waits: ${JSON.stringify(swept)}`);
    assert.equal(await stack.waitForStatus(row.id, ['voided']), 'voided');
    await stack.waitUntilReleased([row.id]);
  });

  it('queues a reversal that comes while its previewed authorization still holds its place', async () => {
    const auth = authEvent(card, { amount: 2_500, merchantId: merchant.id });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-auth', auth)).status, 204);
    const row = await storedEvent(stack.db, issuer.id, 'auth', auth.id);
    assert.equal(await stack.waitForStatus(row.id, ['previewed']), 'previewed');
    await stack.waitUntilReleased([row.id]);
    // As the authorization's row stands between its step's commit and the worker's release.
    const now = new Date();
    await stack.db.handoverPending.create({
      data: { eventId: row.id, queuedAt: now, issuerId: issuer.id, admittedAt: now, processedAt: now },
    });

    assert.equal((await issuer.call('POST', '/api/v1/incoming-auth', { ...auth, state: 'reversed' })).status, 204);
    assert.equal(await stack.waitForStatus(row.id, ['voided']), 'voided');
    await stack.waitUntilReleased([row.id]);
  });

  it('adopts an event an API of the previous release stored but could not hand over', async () => {
    const event = settledEvent(card, { amount: 3_000, merchantId: merchant.id });
    const app = await startTestApp({ db: stack.db }); // no hand-over at all
    try {
      assert.equal(
        (await app.request('POST', '/api/v1/incoming-txn', { token: issuer.token, body: event })).status,
        204,
      );
    } finally {
      await app.close();
    }
    const row = await storedEvent(stack.db, issuer.id, 'settled', event.id);
    // As the previous release stored it: no queue row, handed_over_at still NULL.
    await stack.db.handoverPending.delete({ where: { eventId: row.id } });
    await stack.db.ingestedEvent.update({ where: { id: row.id }, data: { handedOverAt: null } });

    const swept = await sweep();
    assert.ok(swept.handedOver >= 1, JSON.stringify(swept));
    assert.equal(await stack.waitForStatus(row.id, FINAL_STATUSES), 'matched');
    await stack.waitUntilReleased([row.id]);
    assert.notEqual((await stack.db.ingestedEvent.findUniqueOrThrow({ where: { id: row.id } })).handedOverAt, null);
  });

  it('gives a settled purchase its place back only once Temporal has recorded its run closed', async () => {
    const event = settledEvent(card, { amount: 1_800, merchantId: merchant.id });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', event)).status, 204);
    const row = await storedEvent(stack.db, issuer.id, 'settled', event.id);
    assert.equal(await stack.waitForStatus(row.id, FINAL_STATUSES), 'matched');
    await stack.waitUntilReleased([row.id]);
    const described = await stack.client.workflow.getHandle(row.workflowId).describe();
    assert.equal(described.status.name, 'COMPLETED', 'released while its run was still open');
  });

  it('gives an authorization its place back once previewed, while its workflow waits for the settlement', async () => {
    const auth = authEvent(card, { amount: 1_500, merchantId: merchant.id });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-auth', auth)).status, 204);
    const row = await storedEvent(stack.db, issuer.id, 'auth', auth.id);
    assert.equal(await stack.waitForStatus(row.id, ['previewed']), 'previewed');
    await stack.waitUntilReleased([row.id]);
    const described = await stack.client.workflow.getHandle(row.workflowId).describe();
    assert.equal(described.status.name, 'RUNNING', 'idle, waiting for its settlement: it holds no place');
  });

  it('counts a processed purchase whose release was lost only briefly, and deletes its row after the grace', async () => {
    const events = [1, 2].map(() => settledEvent(card, { amount: 1_000, merchantId: merchant.id }));
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', events)).status, 204);
    const [lost, recent] = await Promise.all(events.map((e) => storedEvent(stack.db, issuer.id, 'settled', e.id)));
    for (const row of [lost, recent]) assert.equal(await stack.waitForStatus(row.id, FINAL_STATUSES), 'matched');
    await stack.waitUntilReleased([lost.id, recent.id]);
    // As a worker that died between the steps' commits and its releases leaves them.
    const minuteAgo = new Date(Date.now() - 60_000);
    await stack.db.handoverPending.createMany({
      data: [
        { eventId: lost.id, queuedAt: minuteAgo, issuerId: issuer.id, admittedAt: minuteAgo, processedAt: minuteAgo },
        {
          eventId: recent.id,
          queuedAt: minuteAgo,
          issuerId: issuer.id,
          admittedAt: minuteAgo,
          processedAt: new Date(),
        },
      ],
    });
    const holding = await stack.db.$queryRaw<Array<{ event_id: string }>>(Prisma.sql`
      SELECT event_id FROM handover_pending
       WHERE ${holdingPlace(new Date())} AND event_id IN (${lost.id}, ${recent.id})`);
    assert.deepEqual(
      holding.map((r) => r.event_id),
      [recent.id],
      'a release lost a minute ago no longer holds a place, even before the sweep deletes its row',
    );
    const swept = await createSweepActivities({
      db: stack.db,
      clock: { now: () => new Date() },
      temporal: stack.engine,
      handoverMaxInFlight: TEST_HANDOVER_MAX_IN_FLIGHT,
    }).sweepHandovers({ olderThanMs: 30_000, limit: 100 });
    assert.equal(swept.handedOver, 0, JSON.stringify(swept));
    assert.equal(await queued(lost.id), null, 'past the grace: given back');
    assert.notEqual(await queued(recent.id), null, 'within the grace: its workflow may still be closing');
    await stack.db.handoverPending.delete({ where: { eventId: recent.id } });
  });

  /** A purchase processed, and its queue row put back as its step leaves it: awaiting its release. */
  async function processedAwaitingRelease() {
    const event = settledEvent(card, { amount: 1_000, merchantId: merchant.id });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', event)).status, 204);
    const row = await storedEvent(stack.db, issuer.id, 'settled', event.id);
    assert.equal(await stack.waitForStatus(row.id, FINAL_STATUSES), 'matched');
    await stack.waitUntilReleased([row.id]);
    const now = new Date();
    await stack.db.handoverPending.create({
      data: { eventId: row.id, queuedAt: now, issuerId: issuer.id, admittedAt: now, processedAt: now },
    });
    return { row, now };
  }

  it('tries a release again when its delete fails, so the row goes without waiting for the sweep', async () => {
    const { row } = await processedAwaitingRelease();

    // A release whose database stops answering for its first delete.
    const proxy = await startSilentProxy();
    const db = createDb(proxy.databaseUrl, 1, {
      connectTimeoutMs: 200,
      statementTimeoutMs: 500,
      transactionTimeoutMs: 500,
    });
    const failures: unknown[] = [];
    const logger = { ...createLogger('silent'), warn: (...args: unknown[]) => failures.push(args) };
    try {
      const release = createHandoverRelease({ db, logger: logger as unknown as ReturnType<typeof createLogger> });
      proxy.silence();
      void release.sinks.handover.idle.fn({ workflowId: row.workflowId } as WorkflowInfo, false);
      while (failures.length === 0) await new Promise((r) => setTimeout(r, 20));
      assert.notEqual(await queued(row.id), null, 'the failed delete removed nothing');
      proxy.speak();
      await stack.waitUntilReleased([row.id]);
    } finally {
      proxy.speak();
      await db.$disconnect();
      await proxy.close();
    }
  });

  it('gives back on flush, at once, the places of runs gone idle: a stopping worker does so before closing its pool', async () => {
    const { row } = await processedAwaitingRelease();
    const release = createHandoverRelease({ db: stack.db, logger: createLogger('silent') });
    void release.sinks.handover.idle.fn({ workflowId: row.workflowId } as WorkflowInfo, false);
    await release.flush();
    assert.equal(await queued(row.id), null, 'released by the flush, not by the batch timer after it');
  });

  /** A release whose worker reports its evictions through `evict`, as the SDK's emitter does. */
  function releaseWithEvictions() {
    const evictions = new EventEmitter();
    const release = createHandoverRelease({ db: stack.db, logger: createLogger('silent') });
    release.attach({ evictionsEmitter: evictions } as unknown as Worker);
    const evict = (runId: string, reason: number) => evictions.emit('eviction', { runId, evictJob: { reason } });
    return { release, evict };
  }
  const { EvictionReason } = coresdk.workflow_activation.RemoveFromCache;

  it('releases a closing run whose close the server recorded long after the place stopped counting', async () => {
    const { row } = await processedAwaitingRelease();
    const { release, evict } = releaseWithEvictions();
    void release.sinks.handover.idle.fn({ workflowId: row.workflowId, runId: 'closing-late' } as WorkflowInfo, true);
    // A saturated server answers the completing task after the row stopped counting.
    await new Promise((r) => setTimeout(r, RELEASE_HOLD_MS + 500));
    assert.notEqual(await queued(row.id), null, 'held until the close is recorded');
    evict('closing-late', EvictionReason.WORKFLOW_EXECUTION_ENDING);
    await stack.waitUntilReleased([row.id]);
  });

  it('releases a closing run evicted for another reason, since no idle may follow it', async () => {
    const { row } = await processedAwaitingRelease();
    const { release, evict } = releaseWithEvictions();
    void release.sinks.handover.idle.fn({ workflowId: row.workflowId, runId: 'closing-lost' } as WorkflowInfo, true);
    // The task's completion got no answer the worker could read: the run may well have closed.
    evict('closing-lost', EvictionReason.TASK_NOT_FOUND);
    await stack.waitUntilReleased([row.id]);
  });

  it('takes out of the queue an event processed while its refused hand-over put it back to wait', async () => {
    const { row } = await processedAwaitingRelease();
    // As its hand-over leaves it: admitted, its step about to commit.
    await stack.db.$executeRaw`UPDATE ingested_event SET reward_status = 'pending' WHERE id = ${row.id}`;
    await stack.db.handoverPending.update({ where: { eventId: row.id }, data: { processedAt: null } });
    let commitPutBack!: () => void;
    const putBackHeld = new Promise<void>((r) => (commitPutBack = r));
    let putBackDone!: () => void;
    const putBackUpdated = new Promise<void>((r) => (putBackDone = r));
    // The refused hand-over's put-back, uncommitted while the step commits.
    const putBack = sqlTransaction(stack.db, async (tx) => {
      await tx.$executeRaw`UPDATE handover_pending SET admitted_at = NULL WHERE event_id = ${row.id} AND processed_at IS NULL`;
      putBackDone();
      await putBackHeld;
    });
    await putBackUpdated;
    // Prisma's queries run only once awaited: then() sends it now.
    const step = stack.db.$executeRaw`UPDATE ingested_event SET reward_status = 'matched' WHERE id = ${row.id}`.then(
      (n) => n,
    );
    try {
      await waitForLockWait();
    } finally {
      commitPutBack();
      await Promise.all([putBack, step]);
    }
    assert.equal(await queued(row.id), null, 'not left waiting for an event already processed');
  });

  /** Until some statement of this database waits for a row lock. */
  async function waitForLockWait(): Promise<void> {
    for (const deadline = Date.now() + 10_000; ;) {
      assert.ok(Date.now() < deadline, 'no statement came to wait for the lock');
      const [{ n }] = await stack.db.$queryRaw<Array<{ n: number }>>`
        SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND wait_event_type = 'Lock'`;
      if (n > 0) return;
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  it('keeps a processed event admitted when its repeated hand-over was refused, so its release still finds it', async () => {
    // The sweep handed it over again; its step committed while that call timed out.
    const { row, now } = await processedAwaitingRelease();
    await readmitRefused(stack.db, [row.id]);
    assert.deepEqual(await queued(row.id), {
      eventId: row.id,
      queuedAt: now,
      issuerId: issuer.id,
      admittedAt: now,
      processedAt: now,
      attempts: 0,
      traceparent: null,
    });
    await stack.db.handoverPending.delete({ where: { eventId: row.id } });
  });
});
