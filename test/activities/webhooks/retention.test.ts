// The webhook retention activity alone, on the real database (activities/webhooks/retention.ts):
// webhooks of two issuers with different retentions, of various ages and delivery statuses; past
// its issuer's retention a webhook goes with its deliveries and attempts once every delivery has
// ended, and not before; in bounded batches; a second run deletes nothing; a delivery another
// transaction holds keeps its webhook until the next run; a sandbox issuer's clock counts.
import assert from 'node:assert/strict';
import pg from 'pg';
import { createDb, type Db } from '../../../prisma/client';
import { createLogger } from '../../../core/logger';
import { createIssuer, updateIssuer } from '../../../api/issuers/store';
import { deleteExpiredWebhooks, MAX_RETENTION_BATCH } from '../../../activities/webhooks/retention';
import { DEFAULT_WEBHOOK_RETENTION_DAYS } from '../../../core/rules/webhook-retention';
import { testDatabaseUrl } from '../../helpers/env';
import { agedWebhook, insertEndpoint } from '../../helpers/webhooks';

const DAY_MS = 86_400_000;

describe('deleteExpiredWebhooks (webhook retention)', function () {
  this.timeout(60_000);
  let db: Db;
  const deps = () => ({ db, logger: createLogger('silent') });
  const now = new Date();
  const sweep = (issuerId: string, batchSize = MAX_RETENTION_BATCH, atMs = now.getTime()) =>
    deleteExpiredWebhooks(deps(), { atMs, batchSize, issuerId });
  const made: string[] = [];

  before(() => {
    db = createDb(testDatabaseUrl(), 3);
  });
  after(async () => {
    // Done with: no relay of a later test may take the claimed deliveries once their claim ends.
    await db?.webhookDelivery.updateMany({ where: { endpointId: { in: made } }, data: { relayedAt: new Date() } });
    await db?.$disconnect();
  });

  /** An issuer with two endpoints; its webhookRetentionDays changed as the operator API changes it. */
  async function issuerWith(retentionDays?: number) {
    const issuer = await createIssuer(db, { name: 'Retention test', environment: 'sandbox' }, 'test', now);
    if (retentionDays !== undefined)
      await updateIssuer(db, issuer.id, { webhookRetentionDays: retentionDays }, 'test', now);
    const endpoints = [
      await insertEndpoint(db, issuer.id, 'https://hooks.example.com/a'),
      await insertEndpoint(db, issuer.id, 'https://hooks.example.com/b'),
    ];
    made.push(...endpoints);
    return { id: issuer.id, endpoints };
  }

  /** Which of the webhooks are still stored, and how many deliveries and attempts they keep. */
  async function stored(ids: string[]) {
    const rows = await db.webhook.findMany({ where: { id: { in: ids } }, select: { id: true } });
    return {
      webhooks: ids.filter((id) => rows.some((r) => r.id === id)),
      deliveries: await db.webhookDelivery.count({ where: { webhookId: { in: ids } } }),
      attempts: await db.webhookAttempt.count({ where: { webhookId: { in: ids } } }),
    };
  }

  it('deletes exactly the finished webhooks past each issuer’s own retention, with their deliveries and attempts, once', async () => {
    const standard = await issuerWith();
    const short = await issuerWith(7);
    assert.equal(
      (await db.issuer.findUniqueOrThrow({ where: { id: standard.id } })).webhookRetentionDays,
      DEFAULT_WEBHOOK_RETENTION_DAYS,
    );
    const [a, b] = standard.endpoints;
    const [c, d] = short.endpoints;
    const old = {
      delivered: await agedWebhook(db, standard.id, now, 40, [{ endpointId: a, status: 'delivered', attempts: 2 }]),
      failed: await agedWebhook(db, standard.id, now, 41, [{ endpointId: a, status: 'failed', attempts: 11 }]),
      deliveredAndSkipped: await agedWebhook(db, standard.id, now, 42, [
        { endpointId: a, status: 'delivered', attempts: 1 },
        { endpointId: b, status: 'skipped', attempts: 0 },
      ]),
      noEndpoint: await agedWebhook(db, standard.id, now, 43, [{ endpointId: null, attempts: 1 }]),
      shortDelivered: await agedWebhook(db, short.id, now, 20, [{ endpointId: c, status: 'delivered', attempts: 1 }]),
      shortFailed: await agedWebhook(db, short.id, now, 8, [
        { endpointId: c, status: 'failed', attempts: 3 },
        { endpointId: d, status: 'delivered', attempts: 1 },
      ]),
    };
    const kept = {
      oneStillRetrying: await agedWebhook(db, standard.id, now, 44, [
        { endpointId: a, status: 'delivered', attempts: 1 },
        { endpointId: b, status: 'delivering', attempts: 4 },
      ]),
      pending: await agedWebhook(db, standard.id, now, 45, [{ endpointId: a, status: 'pending', attempts: 0 }]),
      recent: await agedWebhook(db, standard.id, now, 29, [{ endpointId: a, status: 'delivered', attempts: 1 }]),
      recentFailed: await agedWebhook(db, standard.id, now, 20, [{ endpointId: b, status: 'failed', attempts: 11 }]),
      shortRecent: await agedWebhook(db, short.id, now, 6, [{ endpointId: c, status: 'delivered', attempts: 1 }]),
      shortRetrying: await agedWebhook(db, short.id, now, 20, [{ endpointId: d, status: 'delivering', attempts: 5 }]),
    };
    const before = await stored(Object.values(kept));

    assert.deepEqual(await sweep(standard.id), { webhooks: 4, deliveries: 4, attempts: 15, more: false });
    assert.deepEqual(await sweep(short.id), { webhooks: 2, deliveries: 3, attempts: 5, more: false });

    assert.deepEqual(await stored(Object.values(old)), { webhooks: [], deliveries: 0, attempts: 0 });
    assert.deepEqual(await stored(Object.values(kept)), before, 'the others keep every delivery and attempt');
    assert.deepEqual(before.webhooks, Object.values(kept));
    for (const issuer of [standard, short])
      assert.deepEqual(
        await sweep(issuer.id),
        { webhooks: 0, deliveries: 0, attempts: 0, more: false },
        'a second run',
      );
  });

  it('deletes in bounded batches and says whether more may be waiting', async () => {
    const issuer = await issuerWith();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(
        await agedWebhook(db, issuer.id, now, 31 + i, [
          { endpointId: issuer.endpoints[0], status: 'delivered', attempts: 1 },
        ]),
      );
    const batches = [await sweep(issuer.id, 2), await sweep(issuer.id, 2), await sweep(issuer.id, 2)];
    assert.deepEqual(
      batches.map((b) => [b.webhooks, b.more]),
      [
        [2, true],
        [2, true],
        [1, false],
      ],
    );
    assert.deepEqual((await stored(ids)).webhooks, [], 'oldest first, every one in the end');
    await assert.rejects(sweep(issuer.id, 0), RangeError);
    await assert.rejects(sweep(issuer.id, MAX_RETENTION_BATCH + 1), RangeError);
  });

  it('leaves a webhook whose delivery another transaction holds (a recover, a replay) for the next run', async () => {
    const issuer = await issuerWith();
    const [a, b] = issuer.endpoints;
    const busy = await agedWebhook(db, issuer.id, now, 35, [
      { endpointId: a, status: 'delivered', attempts: 1 },
      { endpointId: b, status: 'failed', attempts: 11 },
    ]);
    const other = await agedWebhook(db, issuer.id, now, 36, [{ endpointId: a, status: 'failed', attempts: 11 }]);
    const recover = new pg.Client({ connectionString: testDatabaseUrl() });
    await recover.connect();
    try {
      await recover.query('BEGIN');
      await recover.query(`UPDATE webhook_delivery SET status = 'pending' WHERE webhook_id = $1 AND endpoint_id = $2`, [
        busy,
        b,
      ]);
      assert.deepEqual(await sweep(issuer.id), { webhooks: 1, deliveries: 1, attempts: 11, more: false }, 'no wait');
      assert.deepEqual((await stored([busy, other])).webhooks, [busy]);
      await recover.query('COMMIT');
    } finally {
      await recover.end();
    }
    assert.equal((await sweep(issuer.id)).webhooks, 0, 'reopened: pending again, so kept');
    await db.webhookDelivery.update({
      where: { webhookId_endpointId: { webhookId: busy, endpointId: b } },
      data: { status: 'failed' },
    });
    assert.deepEqual(await sweep(issuer.id), { webhooks: 1, deliveries: 2, attempts: 12, more: false });
  });

  it("counts a sandbox issuer's webhooks on its own clock", async () => {
    const issuer = await issuerWith();
    const written = await agedWebhook(db, issuer.id, now, 10, [
      { endpointId: issuer.endpoints[0], status: 'delivered', attempts: 1 },
    ]);
    assert.equal((await sweep(issuer.id)).webhooks, 0);
    // POST /api/v2/sandbox/clock/advance moves this offset; 25 days on, the webhook is 35 days old.
    await db.issuer.update({ where: { id: issuer.id }, data: { clockOffsetMs: BigInt(25 * DAY_MS) } });
    assert.equal((await sweep(issuer.id)).webhooks, 1);
    assert.deepEqual((await stored([written])).webhooks, []);
  });
});
