// The reward notices scan (activities/notices) and the reward_expired record of the expiry
// (activities/expiry), on the real database with the activities called directly: what each
// scan records and what it leaves for the next, under overlapping scans, a scan killed while
// it waits, endpoints that do not subscribe, and the operator's lead times.
import assert from 'node:assert/strict';
import pg from 'pg';
import { createDb, type Db } from '../../../prisma/client';
import { createLogger } from '../../../core/logger';
import { newId } from '../../../core/ids';
import { buildEnvelope } from '../../../core/webhooks/envelope';
import { WEBHOOK_TYPES } from '../../../core/webhooks/payloads';
import { sendDueRewardNotices } from '../../../activities/notices';
import { expireDueGrants } from '../../../activities/expiry';
import { earnBranded, inTransaction, spendBranded, trialBalance } from '../../../core/domain/ledger';
import {
  assertLedgerHealthy,
  chgId as newChg,
  DAY_MS,
  key,
  ledgerIssuer,
  merchantId as newMerchant,
  plusDays,
} from '../../helpers/ledger';
import { contractViolation, deadUrl, sealedNewSecret, waitFor } from '../../helpers/webhooks';
import { assertError, newIssuer, startTestApp, type TestApp } from '../../helpers/app';
import { testDatabaseUrl } from '../../helpers/env';

describe('reward notices scan', function () {
  this.timeout(60_000);
  let db: Db;
  let app: TestApp;
  const logger = createLogger('silent');
  const deps = () => ({ db, logger });
  // Where the records of this file would go if a later file's relay took them: nothing listens.
  let endpointUrl: string;

  before(async () => {
    db = createDb(testDatabaseUrl(), 8);
    app = await startTestApp({ db });
    endpointUrl = await deadUrl();
  });
  after(async () => {
    await app?.close();
    await db?.$disconnect();
  });

  /** An endpoint row as the API stores one; `types` as an endpoint created before the new types has. */
  async function subscribe(issuerId: string, types: readonly string[] = WEBHOOK_TYPES): Promise<string> {
    const now = new Date();
    const id = newId('whe');
    await db.webhookEndpoint.create({
      data: {
        id,
        issuerId,
        url: endpointUrl,
        enabledTypes: [...types],
        ...sealedNewSecret(issuerId),
        createdAt: now,
        updatedAt: now,
      },
    });
    return id;
  }

  /** A branded grant earned by a purchase at `at`, through the ledger as a settlement posts it. */
  async function grant(
    issuerId: string,
    input: { amountMinor: number; at: Date; availableAt: Date; expiresAt: Date; chgId?: string; merchantId?: string },
  ) {
    const chgId = input.chgId ?? newChg();
    const merchantId = input.merchantId ?? newMerchant();
    const transactionId = newId('txn');
    const earned = await inTransaction(db, (tx) =>
      earnBranded(tx, { idempotencyKey: key('earn'), issuerId, chgId, merchantId, transactionId, ...input }),
    );
    return { id: earned.grant.id, chgId, merchantId, transactionId, ...input };
  }

  const scan = (issuerId: string | undefined, at: Date, batchSize = 100) =>
    sendDueRewardNotices(deps(), { atMs: at.getTime(), batchSize, ...(issuerId ? { issuerId } : {}) });

  const recordsOf = (issuerId: string, type?: string) =>
    db.webhook.findMany({
      where: { issuerId, ...(type ? { type } : {}) },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });

  const grantRow = (id: string) => db.rewardGrant.findUniqueOrThrow({ where: { id } });

  /** The body the relay would send for a record, checked against the published contract. */
  function assertContract(record: Awaited<ReturnType<typeof recordsOf>>[number]): void {
    const body = buildEnvelope({ ...record, data: record.data as never });
    assert.equal(contractViolation(body), undefined, body);
  }

  it('stores a record of every published webhook type (the table’s type CHECK follows WEBHOOK_TYPES)', async () => {
    const issuerId = await ledgerIssuer(db);
    const client = new pg.Client({ connectionString: testDatabaseUrl() });
    await client.connect();
    try {
      await client.query('BEGIN');
      for (const type of WEBHOOK_TYPES) {
        const sourceId = newId('txn');
        await client.query(
          `INSERT INTO webhook (id, issuer_id, type, source_event_id, idempotency_key, data, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, '{}'::jsonb, now(), now())`,
          [newId('evt'), issuerId, type, sourceId, `${type}:${sourceId}`],
        );
      }
      await assert.rejects(
        client.query(
          `INSERT INTO webhook (id, issuer_id, type, source_event_id, idempotency_key, data, created_at, updated_at)
           VALUES ($1, $2, 'reward_unknown', 'x', $3, '{}'::jsonb, now(), now())`,
          [newId('evt'), issuerId, `reward_unknown:${newId('txn')}`],
        ),
        /webhook_type_check/,
      );
    } finally {
      await client.query('ROLLBACK');
      await client.end();
    }
  });

  it('records reward_available once when it falls due, then the 30- and the 7-day notice at their times', async () => {
    const issuerId = await ledgerIssuer(db);
    const endpointId = await subscribe(issuerId);
    const t0 = new Date('2026-11-20T09:00:00.000Z');
    const g = await grant(issuerId, {
      amountMinor: 500,
      at: t0,
      availableAt: plusDays(t0, 2),
      expiresAt: plusDays(t0, 60),
    });

    // Not yet spendable: nothing is due, so the scan does not even look at it.
    assert.deepEqual(await scan(issuerId, plusDays(t0, 1)), { grants: 0, recorded: 0, more: false });

    const availableAt = plusDays(t0, 2);
    assert.deepEqual(await scan(issuerId, availableAt), { grants: 1, recorded: 1, more: false });
    const [available] = await recordsOf(issuerId);
    assert.equal(available.type, 'reward_available');
    assert.equal(available.idempotencyKey, `reward_available:${g.id}`);
    assert.equal(available.sourceEventId, g.id);
    // Its one delivery, to the issuer's endpoint, waits for the relay.
    const deliveries = await db.webhookDelivery.findMany({ where: { webhookId: available.id } });
    assert.deepEqual(
      deliveries.map((d) => [d.endpointId, d.status, d.relayedAt]),
      [[endpointId, 'pending', null]],
    );
    assert.equal(available.createdAt.toISOString(), availableAt.toISOString());
    assert.deepEqual(available.data, {
      chgId: g.chgId,
      merchantId: g.merchantId,
      rewardGrantId: g.id,
      transactionId: g.transactionId,
      currency: 'usd',
      amountMinor: 500,
      availableAt: g.availableAt.toISOString(),
      expiresAt: g.expiresAt.toISOString(),
    });
    assertContract(available);
    const afterAvailable = await grantRow(g.id);
    assert.equal(afterAvailable.availableNoticedAt?.toISOString(), availableAt.toISOString());
    assert.equal(afterAvailable.expiryNoticedDays, null);
    assert.equal(afterAvailable.nextNoticeAt?.toISOString(), plusDays(g.expiresAt, -30).toISOString());

    // A second scan at the same instant finds nothing due.
    assert.deepEqual(await scan(issuerId, availableAt), { grants: 0, recorded: 0, more: false });
    assert.equal((await recordsOf(issuerId)).length, 1);

    // 30 days before expiry: the first expiring notice, with what is left now.
    await scan(issuerId, new Date(plusDays(g.expiresAt, -30).getTime() - 1));
    assert.equal((await recordsOf(issuerId)).length, 1, 'not a millisecond early');
    assert.deepEqual(await scan(issuerId, plusDays(g.expiresAt, -30)), { grants: 1, recorded: 1, more: false });
    const [expiring30] = await recordsOf(issuerId, 'reward_expiring');
    assert.equal(expiring30.idempotencyKey, `reward_expiring:${g.id}:30`);
    assert.deepEqual(expiring30.data, {
      chgId: g.chgId,
      merchantId: g.merchantId,
      rewardGrantId: g.id,
      currency: 'usd',
      remainingMinor: 500,
      expiresAt: g.expiresAt.toISOString(),
      daysBeforeExpiry: 30,
    });
    assertContract(expiring30);

    // Part of it is spent before the 7-day notice, which says what is left.
    const spent = await inTransaction(db, (tx) =>
      spendBranded(tx, {
        idempotencyKey: key('spend'),
        issuerId,
        chgId: g.chgId,
        merchantId: g.merchantId,
        at: plusDays(g.expiresAt, -20),
        maxAmountMinor: 120,
      }),
    );
    assert.equal(spent.drawnMinor, 120);
    assert.deepEqual(await scan(issuerId, plusDays(g.expiresAt, -20)), { grants: 0, recorded: 0, more: false });
    assert.deepEqual(await scan(issuerId, plusDays(g.expiresAt, -7)), { grants: 1, recorded: 1, more: false });
    const expiring = await recordsOf(issuerId, 'reward_expiring');
    assert.deepEqual(
      expiring.map((r) => [r.idempotencyKey, (r.data as any).daysBeforeExpiry, (r.data as any).remainingMinor]),
      [
        [`reward_expiring:${g.id}:30`, 30, 500],
        [`reward_expiring:${g.id}:7`, 7, 380],
      ],
    );
    assertContract(expiring[1]);
    const done = await grantRow(g.id);
    assert.deepEqual([done.expiryNoticedDays, done.nextNoticeAt], [7, null], 'no notice left');

    // Nothing more before the expiry itself.
    assert.deepEqual(await scan(issuerId, plusDays(g.expiresAt, -1)), { grants: 0, recorded: 0, more: false });
    assert.equal((await recordsOf(issuerId)).length, 3);
    await assertLedgerHealthy(db, issuerId);
  });

  it('shares due grants between concurrent scans: each grant handled and each fact recorded once', async () => {
    const issuerId = await ledgerIssuer(db);
    await subscribe(issuerId);
    const t0 = new Date('2026-11-20T09:00:00.000Z');
    const count = 60;
    const chgId = newChg();
    const merchantId = newMerchant();
    const grants = [];
    for (let i = 0; i < count; i++)
      grants.push(
        await grant(issuerId, {
          chgId,
          merchantId,
          amountMinor: 100 + i,
          at: t0,
          availableAt: t0,
          expiresAt: plusDays(t0, 90),
        }),
      );
    const atMs = plusDays(t0, 1);
    // Four scans at once, each in small batches until it finds nothing: with SKIP LOCKED each
    // takes what the others have not locked.
    const drain = async () => {
      const batches = [];
      for (;;) {
        const batch = await scan(issuerId, atMs, 7);
        batches.push(batch);
        if (batch.grants === 0) return batches;
      }
    };
    const results = (await Promise.all([drain(), drain(), drain(), drain()])).flat();
    const handled = results.reduce((n, r) => n + r.grants, 0);
    const recorded = results.reduce((n, r) => n + r.recorded, 0);
    assert.equal(handled, count, 'each grant planned by exactly one scan');
    assert.equal(recorded, count);
    const records = await recordsOf(issuerId);
    assert.equal(records.length, count);
    assert.deepEqual(records.map((r) => r.idempotencyKey).sort(), grants.map((g) => `reward_available:${g.id}`).sort());
    assert.deepEqual(await scan(issuerId, atMs), { grants: 0, recorded: 0, more: false });
    await assertLedgerHealthy(db, issuerId);
  });

  it('commits nothing of a batch whose scan is killed while it waits, and the next scan records each fact once', async () => {
    const issuerId = await ledgerIssuer(db);
    await subscribe(issuerId);
    const t0 = new Date('2026-11-20T09:00:00.000Z');
    const blocked = await grant(issuerId, { amountMinor: 300, at: t0, availableAt: t0, expiresAt: plusDays(t0, 90) });
    const other = await grant(issuerId, { amountMinor: 400, at: t0, availableAt: t0, expiresAt: plusDays(t0, 90) });

    // Another connection holds an uncommitted record with the fact's key: the scan's INSERT
    // waits on it, mid-transaction, as a scan does whose worker is about to die.
    const blocker = new pg.Client({ connectionString: testDatabaseUrl() });
    const admin = new pg.Client({ connectionString: testDatabaseUrl() });
    await blocker.connect();
    await admin.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query(
        `INSERT INTO webhook (id, issuer_id, type, source_event_id, idempotency_key, data, created_at, updated_at)
         VALUES ($1, $2, 'reward_available', $3, $4, '{}'::jsonb, now(), now())`,
        [newId('evt'), issuerId, blocked.id, `reward_available:${blocked.id}`],
      );
      const blockerPid: number = (await blocker.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;

      const scanning = scan(issuerId, plusDays(t0, 1));
      const outcome = scanning.then(
        () => 'completed',
        (err: unknown) => err,
      );
      const scanPid = await waitFor('the scan to wait on the uncommitted record', async () => {
        const { rows } = await admin.query(
          `SELECT pid, wait_event_type FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))`,
          [blockerPid],
        );
        return rows.length === 1 && rows[0].wait_event_type === 'Lock' ? (rows[0].pid as number) : undefined;
      });
      const { rows: query } = await admin.query('SELECT query FROM pg_stat_activity WHERE pid = $1', [scanPid]);
      assert.match(query[0].query, /INSERT INTO webhook/);
      assert.equal((await admin.query('SELECT pg_terminate_backend($1) AS ok', [scanPid])).rows[0].ok, true);
      const failure = await outcome;
      assert.ok(failure instanceof Error, `the killed scan fails, not ${String(failure)}`);

      // Nothing of its batch: neither grant moved on, and no record exists but the blocker's own.
      for (const g of [blocked, other]) {
        const row = await grantRow(g.id);
        assert.equal(row.nextNoticeAt?.toISOString(), t0.toISOString(), g.id);
        assert.equal(row.availableNoticedAt, null);
      }
      assert.equal((await recordsOf(issuerId)).length, 0);
    } finally {
      await blocker.query('ROLLBACK').catch(() => undefined);
      await blocker.end();
      await admin.end();
    }

    assert.deepEqual(await scan(issuerId, plusDays(t0, 1)), { grants: 2, recorded: 2, more: false });
    assert.deepEqual(await scan(issuerId, plusDays(t0, 1)), { grants: 0, recorded: 0, more: false });
    const records = await recordsOf(issuerId);
    assert.deepEqual(
      records.map((r) => r.idempotencyKey).sort(),
      [`reward_available:${blocked.id}`, `reward_available:${other.id}`].sort(),
    );
    records.forEach(assertContract);
    await assertLedgerHealthy(db, issuerId);
  });

  it('records nothing for an endpoint of the old types or no endpoint, and still moves the grants on', async () => {
    const legacy = await ledgerIssuer(db);
    await subscribe(legacy, ['qualified_auth', 'qualified_settlement']);
    const silent = await ledgerIssuer(db);
    const t0 = new Date('2026-11-20T09:00:00.000Z');
    const grants = [
      await grant(legacy, { amountMinor: 250, at: t0, availableAt: t0, expiresAt: plusDays(t0, 20) }),
      await grant(silent, { amountMinor: 350, at: t0, availableAt: t0, expiresAt: plusDays(t0, 20) }),
    ];
    for (const g of grants) {
      const issuerId = g.id === grants[0].id ? legacy : silent;
      // Available, and already within 30 days of its expiry: both would be due.
      assert.deepEqual(await scan(issuerId, plusDays(t0, 1)), { grants: 1, recorded: 0, more: false });
      const row = await grantRow(g.id);
      assert.equal(row.availableNoticedAt?.toISOString(), plusDays(t0, 1).toISOString());
      assert.equal(row.expiryNoticedDays, 30);
      assert.equal(row.nextNoticeAt?.toISOString(), plusDays(g.expiresAt, -7).toISOString());
      assert.deepEqual(await scan(issuerId, plusDays(g.expiresAt, -7)), { grants: 1, recorded: 0, more: false });
      const last = await grantRow(g.id);
      assert.deepEqual([last.expiryNoticedDays, last.nextNoticeAt], [7, null]);
      assert.equal((await recordsOf(issuerId)).length, 0);
    }
    await assertLedgerHealthy(db, legacy);
    await assertLedgerHealthy(db, silent);
  });

  it('records one reward_expired however often the expiry runs, with the breakage posted and its reward event', async () => {
    const issuerId = await ledgerIssuer(db);
    await subscribe(issuerId);
    const t0 = new Date('2026-11-20T09:00:00.000Z');
    const g = await grant(issuerId, { amountMinor: 700, at: t0, availableAt: t0, expiresAt: plusDays(t0, 10) });
    await inTransaction(db, (tx) =>
      spendBranded(tx, {
        idempotencyKey: key('spend'),
        issuerId,
        chgId: g.chgId,
        merchantId: g.merchantId,
        at: plusDays(t0, 1),
        maxAmountMinor: 250,
      }),
    );
    const atMs = plusDays(t0, 10).getTime();
    const first = await expireDueGrants(deps(), { atMs, batchSize: 10, issuerId });
    const second = await expireDueGrants(deps(), { atMs, batchSize: 10, issuerId });
    assert.deepEqual([first.expired, first.expiredMinor, second.expired], [1, 450, 0]);

    const records = await recordsOf(issuerId, 'reward_expired');
    assert.equal(records.length, 1);
    const [expired] = records;
    const breakage = (await trialBalance(db, { issuerId })).accounts.find(
      (a) => a.kind === 'breakage' && a.merchantId === g.merchantId,
    );
    const transfer = await db.ledgerTransfer.findFirstOrThrow({ where: { issuerId, kind: 'expire_branded' } });
    const event = await db.rewardEvent.findFirstOrThrow({ where: { issuerId, type: 'branded_expired' } });
    assert.equal(breakage?.balanceMinor, 450);
    assert.equal(transfer.amountMinor, 450n);
    assert.equal(expired.idempotencyKey, `reward_expired:${g.id}`);
    assert.equal(expired.createdAt.getTime(), atMs);
    assert.deepEqual(expired.data, {
      chgId: g.chgId,
      merchantId: g.merchantId,
      rewardGrantIds: [g.id],
      currency: 'usd',
      amountMinor: breakage?.balanceMinor,
      rewardEventId: event.id,
    });
    assert.equal(event.rewardGrantId, g.id);
    assertContract(expired);
    // An expired grant has no notice left: the scan plans none for it.
    await scan(issuerId, new Date(atMs));
    assert.equal((await recordsOf(issuerId)).length, 1);
    await assertLedgerHealthy(db, issuerId);
  });

  describe('the issuer’s lead times (operator PATCH expiryNoticeDays)', () => {
    async function issuerGrant(expiresInDays: number) {
      const issuer = await newIssuer(app);
      await subscribe(issuer.id);
      // Real time: the PATCH replans with the database's now.
      const now = new Date();
      const g = await grant(issuer.id, {
        amountMinor: 600,
        at: now,
        availableAt: now,
        expiresAt: plusDays(now, expiresInDays),
      });
      return { issuer, g, now };
    }
    const patch = (issuerId: string, body: unknown) => app.operator('PATCH', `/admin/v1/issuers/${issuerId}`, body);
    const expiringDays = async (issuerId: string) =>
      (await recordsOf(issuerId, 'reward_expiring')).map((r) => (r.data as any).daysBeforeExpiry);

    it('plans the next notices by the new lead times, and none with []', async () => {
      const { issuer, g, now } = await issuerGrant(20);
      // Default [30, 7]: available and already within 30 days.
      assert.deepEqual(await scan(issuer.id, now), { grants: 1, recorded: 2, more: false });
      assert.deepEqual(await expiringDays(issuer.id), [30]);

      const res = await patch(issuer.id, { expiryNoticeDays: [14] });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.expiryNoticeDays, [14]);
      assert.deepEqual((await db.issuer.findUniqueOrThrow({ where: { id: issuer.id } })).expiryNoticeDays, [14]);
      await scan(issuer.id, new Date(plusDays(g.expiresAt, -14).getTime() - 1));
      assert.deepEqual(await expiringDays(issuer.id), [30], 'not before 14 days');
      assert.deepEqual(await scan(issuer.id, plusDays(g.expiresAt, -14)), { grants: 1, recorded: 1, more: false });
      assert.deepEqual(await expiringDays(issuer.id), [30, 14]);
      const [, fourteen] = await recordsOf(issuer.id, 'reward_expiring');
      assert.equal(fourteen.idempotencyKey, `reward_expiring:${g.id}:14`);
      assertContract(fourteen);
      // 7 is no longer a lead time.
      assert.deepEqual(await scan(issuer.id, plusDays(g.expiresAt, -7)), { grants: 0, recorded: 0, more: false });
      assert.deepEqual(await expiringDays(issuer.id), [30, 14]);

      // Lead times are stored largest first, whatever order they come in.
      const reordered = await patch(issuer.id, { expiryNoticeDays: [7, 60, 30] });
      assert.deepEqual(reordered.body.expiryNoticeDays, [60, 30, 7]);

      const none = await issuerGrant(20);
      assert.equal((await patch(none.issuer.id, { expiryNoticeDays: [] })).status, 200);
      // The PATCH replanned the grant at the database's now, after none.now.
      assert.deepEqual(await scan(none.issuer.id, new Date()), { grants: 1, recorded: 1, more: false });
      assert.equal((await grantRow(none.g.id)).nextNoticeAt, null);
      for (const days of [19, 10, 1]) await scan(none.issuer.id, new Date(none.g.expiresAt.getTime() - days * DAY_MS));
      assert.deepEqual(
        (await recordsOf(none.issuer.id)).map((r) => r.type),
        ['reward_available'],
      );
      await assertLedgerHealthy(db, issuer.id);
      await assertLedgerHealthy(db, none.issuer.id);
    });

    it('refuses lead times out of range, repeated, or too many with 400 invalid_body', async () => {
      const issuer = await newIssuer(app);
      for (const expiryNoticeDays of [[0], [366], [7, 7], [60, 30, 14, 7, 3, 1], [1.5], ['7'], 7])
        assertError(await patch(issuer.id, { expiryNoticeDays }), 400, 'invalid_body');
      const stored = await db.issuer.findUniqueOrThrow({ where: { id: issuer.id } });
      assert.deepEqual(stored.expiryNoticeDays, [30, 7]);
      const fiveIsTheLimit = await patch(issuer.id, { expiryNoticeDays: [1, 365, 3, 90, 30] });
      assert.equal(fiveIsTheLimit.status, 200, fiveIsTheLimit.text);
      assert.deepEqual(fiveIsTheLimit.body.expiryNoticeDays, [365, 90, 30, 3, 1]);
    });
  });
});
