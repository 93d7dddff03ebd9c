// Branded balance end to end, on the time-skipping Temporal test server and the real
// PostgreSQL: earn → not yet available (the issuer delay holds it) → available after the
// delay → spent on a later purchase → the rest expires through the ExpireGrants workflow.
// The lifecycle activities take the workflow's clock, so skipped days move availability and
// expiry; the API reads the same skipped clock.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporal } from '@temporalio/proto';
import { Runtime, DefaultLogger, type Worker } from '@temporalio/worker';
import { createWorker } from '../../worker/worker';
import { createLogger } from '../../core/logger';
import { createDb, type Db } from '../../prisma/client';
import { createApiHandover } from '../../api/ingestion/handover-queue';
import { TEST_HANDOVER_MAX_IN_FLIGHT } from '../helpers/stack';
import { findTestServer } from '../../scripts/lib/temporal-dev-server';
import { SEARCH_ATTRIBUTE_DECLARATIONS } from '../../workflows/search-attributes';
import { startTestApp, newIssuer, type TestApp, type TestIssuer } from '../helpers/app';
import { groupBody } from '../helpers/groups';
import { cardOf, settledEvent, type CardRef } from '../helpers/events';
import { createMerchant, createOffer, daysFromNow } from '../helpers/catalogue';
import { assertLedgerHealthy } from '../helpers/ledger';
import { testDatabaseUrl, testWebhookDestinations, testWebhookSecretKeys } from '../helpers/env';
import { testEngine } from '../helpers/engine';

const DAY_MS = 86_400_000;
const { IndexedValueType } = temporal.api.enums.v1;

describe('branded balance lifecycle (time-skipping)', function () {
  this.timeout(180_000);
  let env: TestWorkflowEnvironment;
  let db: Db;
  let worker: Worker;
  let running: Promise<void>;
  let app: TestApp;
  let handover: ReturnType<typeof createApiHandover>;
  let nowMs = Date.now();
  const taskQueue = `test-${randomUUID()}`;

  before(async () => {
    try {
      Runtime.install({ logger: new DefaultLogger('WARN') });
    } catch {
      // Already installed by another test file of this run.
    }
    env = await TestWorkflowEnvironment.createTimeSkipping({
      server: { executable: { type: 'existing-path', path: findTestServer() } },
    });
    // The lifecycle starts with our custom search attributes; the test server must know them.
    const kinds = {
      Keyword: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
      KeywordList: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
    };
    await env.connection.operatorService.addSearchAttributes({
      namespace: 'default',
      searchAttributes: Object.fromEntries(
        Object.entries(SEARCH_ATTRIBUTE_DECLARATIONS).map(([name, type]) => [name, kinds[type]]),
      ),
    });
    db = createDb(testDatabaseUrl(), 10);
    const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
    const engine = testEngine(env.client, taskQueue);
    worker = await createWorker({
      connection: env.nativeConnection,
      namespace: 'default',
      taskQueue,
      deps: {
        db,
        logger,
        clock: { now: () => new Date(nowMs) },
        temporal: engine,
        webhookDestinations: testWebhookDestinations,
        webhookSecretKeys: testWebhookSecretKeys,
      },
    });
    running = worker.run();
    handover = createApiHandover({ temporal: engine, db }, logger, TEST_HANDOVER_MAX_IN_FLIGHT);
    app = await startTestApp({ db, handover, clock: { now: () => new Date(nowMs) } });
    nowMs = await env.currentTimeMs();
  });
  after(async () => {
    await handover?.drain();
    await app?.close();
    worker?.shutdown();
    await running;
    await db?.$disconnect();
    await env?.teardown();
  });

  async function skipDays(days: number) {
    await env.sleep(days * DAY_MS);
    nowMs = await env.currentTimeMs();
  }

  async function settle(issuer: TestIssuer, card: CardRef, merchantId: string, amount: number): Promise<string> {
    // Dated on the clock the service runs on here (the test server's skipped time): a purchase
    // is decided as of its own date.
    const createdAt = new Date(nowMs).toISOString();
    const event = settledEvent(card, { amount, merchantId, createdAt, settledAt: createdAt });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', event)).status, 204);
    const row = await db.ingestedEvent.findUniqueOrThrow({
      where: { issuerId_kind_externalId: { issuerId: issuer.id, kind: 'settled', externalId: event.id } },
    });
    for (let i = 0; i < 600; i++) {
      const status = (await db.ingestedEvent.findUniqueOrThrow({ where: { id: row.id } })).rewardStatus;
      if (['matched', 'not_matched', 'unknown'].includes(status)) {
        assert.equal(status, 'matched');
        return row.id;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`transaction ${row.id} was not processed`);
  }

  it('earns, waits out the issuer delay, spends, then expires the rest to breakage', async () => {
    const issuer = await newIssuer(app);
    assert.equal(
      (await app.operator('PATCH', `/admin/v1/issuers/${issuer.id}`, { brandedAvailabilityDelayDays: 5 })).status,
      200,
    );
    const group = (await issuer.call('POST', '/api/v2/chg', groupBody())).body;
    const merchant = await createMerchant(app, {
      brandedBalance: { enabled: true, spendMinimumMinor: 500, availabilityDelayDays: 2, expiryDays: 30 },
    });
    await createOffer(app, merchant.id, { cashbackRateBps: 0, brandedRateBps: 1000, startsAt: daysFromNow(-10) });
    assert.equal(
      (await issuer.call('PUT', `/api/v2/chg/${group.id}/merchant/${merchant.id}/activation`, {})).status,
      201,
    );
    const card = cardOf(group);
    const base = `/api/v2/chg/${group.id}`;

    // 1. Earn 10% of 10,000 as branded balance: held by the longer (issuer) delay.
    await settle(issuer, card, merchant.id, 10_000);
    const held = (await issuer.call('GET', `${base}/merchant/${merchant.id}/spend-eligibility?amountMinor=600`)).body;
    assert.deepEqual(
      [held.eligible, held.availableBalanceMinor, held.pendingBalanceMinor, held.spendRestrictionReasons],
      [false, 0, 1000, ['no_available_balance', 'issuer_availability_delay']],
    );

    // 2. After the delay the balance is available.
    await skipDays(6);
    const ready = (await issuer.call('GET', `${base}/merchant/${merchant.id}/spend-eligibility?amountMinor=600`)).body;
    assert.deepEqual([ready.eligible, ready.availableBalanceMinor, ready.spendRestrictionReasons], [true, 1000, []]);

    // 3. A purchase of 600 (above the merchant's 500 minimum) spends 600 of it.
    const spendTxn = await settle(issuer, card, merchant.id, 600);
    const detail = (await issuer.call('GET', `${base}/transaction/${spendTxn}/reward-detail`)).body;
    assert.deepEqual([detail.spentAmountMinor, detail.earnedAmountMinor], [600, 0]);
    const balance = (await issuer.call('GET', `${base}/merchant/${merchant.id}/balance`)).body;
    assert.deepEqual([balance.availableMinor, balance.notYetAvailableMinor, balance.grants.length], [400, 0, 1]);

    // 4. Past the 30-day expiry, the scheduled workflow moves the rest to breakage.
    await skipDays(25);
    const result = await env.client.workflow.execute('expireGrants', {
      args: [{ issuerId: issuer.id }],
      taskQueue,
      workflowId: `expire-${randomUUID()}`,
    });
    assert.deepEqual([result.expired, result.expiredMinor, result.failed], [1, 400, 0]);
    const activity = (await issuer.call('GET', `${base}/rewards/activity`)).body.data;
    assert.deepEqual(
      activity.map((r: any) => [r.type, r.amountMinor]),
      [
        ['branded_expired', 400],
        ['branded_spent', 600],
        ['branded_earned', 1000],
      ],
    );
    const summary = (await issuer.call('GET', `${base}/rewards/summary`)).body.brandedBalance;
    assert.deepEqual(summary, {
      earnedMinor: 1000,
      adjustedMinor: 0,
      availableMinor: 0,
      notYetAvailableMinor: 0,
      spentMinor: 600,
      expiredMinor: 400,
      clawedBackMinor: 0,
    });
    const trial = (await app.operator('GET', '/admin/v1/ledger/trial-balance')).body;
    const breakage = trial.accounts.find(
      (a: any) => a.kind === 'breakage' && a.issuerId === issuer.id && a.merchantId === merchant.id,
    );
    assert.equal(breakage?.balanceMinor, 400);
    assert.equal(trial.totalMinor, 0);
    await assertLedgerHealthy(db, issuer.id);
  });
});
