// Records the workflow histories that test/workflows/replay.test.ts replays. Not part of
// `npm test` (the file name does not end in .test.ts); run it after a deliberate, versioned
// workflow change with `npm run record-histories`, and commit the JSON it writes. Histories of
// earlier shapes stay beside the new ones under their version prefix (v1-*.json: before the
// lean-pipeline patch), because runs of those shapes may still be open when the code changes.
// Each scenario drives the real service (HTTP → Temporal → PostgreSQL) like the e2e tests.
// A history already in the folder is kept: it was recorded by the code of its day, and replaying
// it against today's code is what the replay test is for (CONTRIBUTING.md: never a new recording
// of the old cases). RECORD_HISTORIES_OVERWRITE=<name>,<name> (or `all`) records those again.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import { INVARIANT_BROKEN } from '../../core/failure-types';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { startStack, type Stack } from '../helpers/stack';
import { newIssuer, startTestApp, type TestIssuer } from '../helpers/app';
import { groupBody } from '../helpers/groups';
import { authEvent, cardOf, settledEvent } from '../helpers/events';
import { createMerchant, createOffer, daysFromNow } from '../helpers/catalogue';
import { agedWebhook, deliveryOf, firstEndpointId, insertEndpoint, startReceiver } from '../helpers/webhooks';
import { webhookDeliveryWorkflowId } from '../../workflows/webhook-delivery-contract';
import { startTimeSkipping } from '../helpers/time-skipping';
import {
  DEFAULT_SETTLEMENT_TIMEOUT_MS,
  LIFECYCLE_WORKFLOW_TYPE,
  lifecycleInput,
} from '../../workflows/lifecycle-signals';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { createWorker } from '../../worker/worker';
import { createLogger } from '../../core/logger';
import { testTemporalAddress, testWebhookDestinations, testWebhookSecretKeys } from '../helpers/env';
import { testEngine } from '../helpers/engine';
import { newId } from '../../core/ids';
import { CLAIM_WORKFLOW_TYPE, claimWorkflowId, resolveClaimUpdate } from '../../workflows/claim-resolution-contract';
import { PAYOUT_WORKFLOW_TYPE, payoutWorkflowId } from '../../workflows/payout-run-contract';
import { STATEMENT_RUN_WORKFLOW_TYPE, statementRunWorkflowId } from '../../workflows/statement-run-contract';
import { ENROLMENT_RUN_WORKFLOW_TYPE, enrolmentRunWorkflowId } from '../../workflows/enrolment-run-contract';
import { openEnrolmentRun } from '../../core/domain/enrolment-runs';
import { WEBHOOK_RETENTION_WORKFLOW_TYPE } from '../../workflows/webhook-retention-contract';

const DIR = join(__dirname, 'histories');
const OVERWRITE = new Set((process.env.RECORD_HISTORIES_OVERWRITE ?? '').split(',').filter(Boolean));
const kept: string[] = [];

/** Writes `histories/<name>.json`, unless a committed one is there and OVERWRITE does not name it. */
function writeHistory(name: string, history: Parameters<typeof historyToJSON>[0]): void {
  const file = join(DIR, `${name}.json`);
  if (existsSync(file) && !OVERWRITE.has(name) && !OVERWRITE.has('all')) {
    kept.push(name);
    return;
  }
  writeFileSync(file, `${historyToJSON(history)}\n`);
}
const FINAL = ['matched', 'not_matched', 'reversed', 'unknown', 'voided', 'previewed'];

describe('record workflow histories', function () {
  this.timeout(300_000);
  let stack: Stack;
  let issuer: TestIssuer;
  let failNext = false;

  before(async () => {
    stack = await startStack({
      settings: { webhookRetryScheduleMs: [100, 100] },
      faults: {
        beforeActivity(activity) {
          if (activity === 'settleTransaction' && failNext) {
            failNext = false;
            throw ApplicationFailure.nonRetryable('recorded permanent failure', INVARIANT_BROKEN);
          }
        },
      },
    });
    issuer = await newIssuer(stack.app);
  });
  after(async () => {
    await stack.stop();
    if (kept.length > 0)
      console.log(
        `kept ${kept.length} histories already recorded (${kept.join(', ')}); RECORD_HISTORIES_OVERWRITE=<name>,... records them again`,
      );
  });

  async function save(name: string, workflowId: string) {
    const handle = stack.client.workflow.getHandle(workflowId);
    await handle.result().catch(() => undefined);
    writeHistory(name, await handle.fetchHistory());
  }
  const row = (kind: 'auth' | 'settled', externalId: string) =>
    stack.db.ingestedEvent.findUniqueOrThrow({
      where: { issuerId_kind_externalId: { issuerId: issuer.id, kind, externalId } },
    });

  it('records the lifecycle, webhook delivery and sweeper paths', async () => {
    const receiver = await startReceiver((n) => (n === 0 ? 500 : 204));
    assert.equal((await issuer.call('PUT', '/api/v2/webhook-endpoint', { url: receiver.url })).status, 201);
    const group = (await issuer.call('POST', '/api/v2/chg', groupBody())).body;
    const card = cardOf(group);
    const merchant = await createMerchant(stack.app, {
      brandedBalance: { enabled: true, spendMinimumMinor: 0, availabilityDelayDays: 0, expiryDays: 365 },
    });
    await createOffer(stack.app, merchant.id, { cashbackRateBps: 500, brandedRateBps: 100, startsAt: daysFromNow(-3) });
    await issuer.call('PUT', `/api/v2/chg/${group.id}/merchant/${merchant.id}/activation`, {});

    // Authorization, then its settlement: preview, qualified_auth, settlement, qualified_settlement.
    const auth = authEvent(card, { amount: 8_000, merchantId: merchant.id });
    await issuer.call('POST', '/api/v1/incoming-auth', auth);
    const authRow = await row('auth', auth.id);
    await stack.waitForStatus(authRow.id, ['previewed']);
    const settled = settledEvent(card, { amount: 8_000, merchantId: merchant.id, authorizationId: auth.id });
    await issuer.call('POST', '/api/v1/incoming-txn', settled);
    await stack.waitForStatus((await row('settled', settled.id)).id, FINAL);
    await save('lifecycle-auth-settle', authRow.workflowId);

    // A refund later: a new run of the purchase's workflow.
    const refund = settledEvent(card, {
      state: 'refunded',
      amount: 3_000,
      relatedTransactionId: settled.id,
      merchantId: merchant.id,
    });
    await issuer.call('POST', '/api/v1/incoming-txn', refund);
    await stack.waitForStatus((await row('settled', refund.id)).id, FINAL);
    await save('lifecycle-refund', authRow.workflowId);

    // An authorization reversed before settlement.
    const reversed = authEvent(card, { merchantId: merchant.id });
    await issuer.call('POST', '/api/v1/incoming-auth', reversed);
    const reversedRow = await row('auth', reversed.id);
    await stack.waitForStatus(reversedRow.id, ['previewed']);
    await issuer.call('POST', '/api/v1/incoming-auth', { ...reversed, state: 'reversed' });
    await stack.waitForStatus(reversedRow.id, ['voided']);
    await save('lifecycle-auth-reversal', reversedRow.workflowId);

    // A settlement that fails for good, then is reprocessed.
    failNext = true;
    const failing = settledEvent(card, { amount: 1_000, merchantId: merchant.id });
    await issuer.call('POST', '/api/v1/incoming-txn', failing);
    const failingRow = await row('settled', failing.id);
    await stack.waitForStatus(failingRow.id, ['unknown']);
    await save('lifecycle-settle-unknown', failingRow.workflowId);
    assert.equal(
      (await stack.app.operator('POST', `/admin/v1/transactions/${failingRow.id}/reprocess`, {})).status,
      202,
    );
    await stack.waitForStatus(failingRow.id, ['matched']);
    await save('lifecycle-unknown-reprocess', failingRow.workflowId);

    // The qualified_auth delivery: the relay's first attempt got a 500, the workflow's retry a 204.
    const webhook = await stack.db.webhook.findFirstOrThrow({ where: { sourceEventId: authRow.id } });
    const endpointId = await firstEndpointId(stack.db, issuer.id);
    for (let i = 0; i < 600 && (await deliveryOf(stack.db, webhook.id, endpointId)).status !== 'delivered'; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    await save('webhook-delivery-retry', webhookDeliveryWorkflowId(webhook.id, endpointId));
    await receiver.close();

    // The sweeper.
    const sweeper = await stack.client.workflow.start('handoverSweeper', {
      taskQueue: stack.taskQueue,
      workflowId: `sweeper-${Date.now()}`,
    });
    await save('handover-sweeper', sweeper.workflowId);
    const expiry = await stack.client.workflow.start('expireGrants', {
      taskQueue: stack.taskQueue,
      workflowId: `expire-${Date.now()}`,
      args: [{ issuerId: issuer.id }],
    });
    await save('expire-grants', expiry.workflowId);
  });

  it('records a claim rejected by its evidence, and one approved by an operator', async () => {
    const group = (await issuer.call('POST', '/api/v2/chg', groupBody())).body;
    const merchant = await createMerchant(stack.app);
    await createOffer(stack.app, merchant.id, { cashbackRateBps: 500, startsAt: daysFromNow(-3) });
    await issuer.call('PUT', `/api/v2/chg/${group.id}/merchant/${merchant.id}/activation`, {});
    const file = async (body: object) => {
      const res = await issuer.call('POST', `/api/v2/chg/${group.id}/claims`, { reason: 'missing_reward', ...body });
      assert.equal(res.status, 202, res.text);
      return res.body;
    };
    const rejected = await file({ externalId: 'never-sent' });
    await save('claim-rejected', rejected.workflowId);

    // A sandbox purchase naming no catalogue merchant, claimed at the activated one: in review.
    const missed = settledEvent(cardOf(group), { merchantId: 'mp_00000000-0000-7000-8000-000000000000' });
    await issuer.call('POST', '/api/v1/incoming-txn', missed);
    const missedRow = await row('settled', missed.id);
    await stack.waitForStatus(missedRow.id, FINAL);
    const claim = await file({ transactionId: missedRow.id, merchantId: merchant.id });
    for (let i = 0; i < 600; i++) {
      if ((await stack.db.claim.findUniqueOrThrow({ where: { id: claim.id } })).status === 'needs_review') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const approved = await stack.app.operator('POST', `/admin/v1/claims/${claim.id}/approve`, {});
    assert.equal(approved.status, 200, approved.text);
    await save('claim-approved', claim.workflowId);
  });

  it('records a payout run over three groups in chunks of two', async () => {
    const payer = await newIssuer(stack.app);
    await stack.app.operator('PATCH', `/admin/v1/issuers/${payer.id}`, { cashbackHoldDays: 0 });
    const merchant = await createMerchant(stack.app, { brandedBalance: { enabled: false } });
    await createOffer(stack.app, merchant.id, { cashbackRateBps: 1000, startsAt: daysFromNow(-3) });
    for (const amount of [1000, 2000, 3000]) {
      const group = (await payer.call('POST', '/api/v2/chg', groupBody())).body;
      await payer.call('PUT', `/api/v2/chg/${group.id}/merchant/${merchant.id}/activation`, {});
      const event = settledEvent(cardOf(group), { amount, merchantId: merchant.id });
      await payer.call('POST', '/api/v1/incoming-txn', event);
      const stored = await stack.db.ingestedEvent.findFirstOrThrow({
        where: { issuerId: payer.id, kind: 'settled', externalId: event.id },
      });
      await stack.waitForStatus(stored.id, FINAL);
    }
    const payoutId = newId('po');
    const at = new Date();
    await stack.db.payout.create({
      data: {
        ...{ id: payoutId, issuerId: payer.id, kind: 'run', status: 'processing', idempotencyKey: payoutId },
        ...{ requestHash: payoutId, minimumMinor: 1n, chgIds: [], asOf: at, createdAt: at },
      },
    });
    const workflowId = payoutWorkflowId(payer.id, payoutId);
    await stack.client.workflow.start(PAYOUT_WORKFLOW_TYPE, {
      workflowId,
      taskQueue: stack.taskQueue,
      args: [{ issuerId: payer.id, payoutId, chunkSize: 2 }],
    });
    await save('payout-run', workflowId);
  });

  it('records a statement run over three merchants in chunks of two', async () => {
    for (const amount of [1000, 2000, 3000]) {
      const merchant = await createMerchant(stack.app, { brandedBalance: { enabled: false } });
      await createOffer(stack.app, merchant.id, {
        cashbackRateBps: 1000,
        startsAt: daysFromNow(-3),
        commission: { rateBps: 100, flatMinor: 0 },
      });
      const group = (await issuer.call('POST', '/api/v2/chg', groupBody())).body;
      await issuer.call('PUT', `/api/v2/chg/${group.id}/merchant/${merchant.id}/activation`, {});
      const event = settledEvent(cardOf(group), { amount, merchantId: merchant.id });
      await issuer.call('POST', '/api/v1/incoming-txn', event);
      await stack.waitForStatus((await row('settled', event.id)).id, FINAL);
    }
    const runId = newId('stmrun');
    const period = new Date().toISOString().slice(0, 7);
    await stack.db.statementRun.create({
      data: { id: runId, period, status: 'processing', idempotencyKey: runId, requestHash: runId, actor: 'recording' },
    });
    const workflowId = statementRunWorkflowId(period, runId);
    await stack.client.workflow.start(STATEMENT_RUN_WORKFLOW_TYPE, {
      workflowId,
      taskQueue: stack.taskQueue,
      args: [{ runId, chunkSize: 2 }],
    });
    await save('statement-run', workflowId);
  });

  it('records a webhook retention run over one issuer in batches of two', async () => {
    const keeper = await newIssuer(stack.app);
    const endpointId = await insertEndpoint(stack.db, keeper.id, 'https://hooks.example.com/retention');
    const now = new Date();
    for (const daysAgo of [31, 32, 33])
      await agedWebhook(stack.db, keeper.id, now, daysAgo, [{ endpointId, status: 'delivered', attempts: 1 }]);
    const workflowId = `webhook-retention-${Date.now()}`;
    await stack.client.workflow.start(WEBHOOK_RETENTION_WORKFLOW_TYPE, {
      workflowId,
      taskQueue: stack.taskQueue,
      args: [{ issuerId: keeper.id, batchSize: 2 }],
    });
    await save('webhook-retention', workflowId);
  });

  /** An issuer's five groups and a targeted offer of a merchant only it sees, with no run yet. */
  async function enrollingOffer() {
    const enrolling = await newIssuer(stack.app);
    const merchant = await createMerchant(stack.app, { issuerIds: [enrolling.id] });
    for (const segments of [['premium'], ['premium'], [], ['premium', 'student'], ['premium']])
      await enrolling.call('POST', '/api/v2/chg', groupBody({ segments }));
    // Targeted behind the API's back, so that its own run (default chunks) does not start.
    const offer = await createOffer(stack.app, merchant.id, { cashbackRateBps: 500, startsAt: daysFromNow(-3) });
    await stack.db.offer.update({
      where: { id: offer.id },
      data: { activation: 'auto', audience: { segments: ['premium'] }, holdoutBps: 5000 },
    });
    const run = await openEnrolmentRun(stack.db, offer.id, 'changed', new Date());
    assert.ok(run);
    return { offerId: offer.id, runId: run.id };
  }

  it('records an enrolment run over five groups in two lanes, in chunks of two', async () => {
    const { offerId, runId } = await enrollingOffer();
    const workflowId = enrolmentRunWorkflowId(offerId, runId);
    await stack.client.workflow.start(ENROLMENT_RUN_WORKFLOW_TYPE, {
      workflowId,
      taskQueue: stack.taskQueue,
      args: [{ offerId, runId, chunkSize: 2, lanes: 2 }],
    });
    await save('enrolment-run-lanes', workflowId);
  });

  it('records an enrolment run over five groups in chunks of two', async () => {
    const { offerId, runId } = await enrollingOffer();
    const workflowId = enrolmentRunWorkflowId(offerId, runId);
    await stack.client.workflow.start(ENROLMENT_RUN_WORKFLOW_TYPE, {
      workflowId,
      taskQueue: stack.taskQueue,
      args: [{ offerId, runId, chunkSize: 2 }],
    });
    await save('enrolment-run', workflowId);
  });

  it('records a v1 run that previewed on the v1 code and settled after the upgrade', async () => {
    const group = (await issuer.call('POST', '/api/v2/chg', groupBody())).body;
    const merchant = await createMerchant(stack.app);
    await createOffer(stack.app, merchant.id, { cashbackRateBps: 500, startsAt: daysFromNow(-3) });
    await issuer.call('PUT', `/api/v2/chg/${group.id}/merchant/${merchant.id}/activation`, {});
    const auth = authEvent(cardOf(group), { merchantId: merchant.id });
    const settled = settledEvent(cardOf(group), { merchantId: merchant.id, authorizationId: auth.id });
    const quiet = await startTestApp({ db: stack.db });
    await quiet.request('POST', '/api/v1/incoming-auth', { token: issuer.token, body: auth });
    await quiet.request('POST', '/api/v1/incoming-txn', { token: issuer.token, body: settled });
    await quiet.close();
    const authRow = await row('auth', auth.id);
    const taskQueue = `record-v1-${Date.now()}`;
    const connection = await NativeConnection.connect({ address: testTemporalAddress() });
    const deps = recordingDeps(stack, taskQueue);
    try {
      const v1 = await Worker.create({
        connection,
        taskQueue,
        workflowsPath: require.resolve('./fixtures/v1'),
        activities: createActivities(deps),
      });
      const handle = await v1.runUntil(async () => {
        // The input of a run started before the lean pipeline: no `shape`.
        const h = await stack.client.workflow.signalWithStart(LIFECYCLE_WORKFLOW_TYPE, {
          workflowId: authRow.workflowId,
          taskQueue,
          args: [{ issuerId: issuer.id }],
          signal: 'authorization',
          signalArgs: [{ eventId: authRow.id }],
        });
        await stack.waitForStatus(authRow.id, ['previewed']);
        await new Promise((r) => setTimeout(r, 1_000)); // the v1 run reaches its settlement timer
        return h;
      });
      const current = await createWorker({ connection, namespace: 'default', taskQueue, deps });
      await current.runUntil(async () => {
        await handle.signal('settlement', { eventId: (await row('settled', settled.id)).id });
        await handle.result();
      });
      writeHistory('v1-lifecycle-auth-then-settle-after-upgrade', await handle.fetchHistory());
    } finally {
      await connection.close();
    }
  });

  it('records a claim on the code before decisions took turns, where an approve and a reject arrived together', async () => {
    const group = (await issuer.call('POST', '/api/v2/chg', groupBody())).body;
    const merchant = await createMerchant(stack.app);
    await createOffer(stack.app, merchant.id, { cashbackRateBps: 500, startsAt: daysFromNow(-3) });
    await issuer.call('PUT', `/api/v2/chg/${group.id}/merchant/${merchant.id}/activation`, {});
    const missed = settledEvent(cardOf(group), { merchantId: 'mp_00000000-0000-7000-8000-000000000000' });
    await issuer.call('POST', '/api/v1/incoming-txn', missed);
    const missedRow = await row('settled', missed.id);
    await stack.waitForStatus(missedRow.id, FINAL);
    // The claim as the API files it, its run on a task queue that only the old code serves.
    const claimId = newId('clm');
    const workflowId = claimWorkflowId(issuer.id, claimId);
    await stack.db.claim.create({
      data: {
        id: claimId,
        issuerId: issuer.id,
        chgId: group.id,
        transactionId: missedRow.id,
        reason: 'missing_reward',
        merchantId: merchant.id,
        workflowId,
      },
    });
    const taskQueue = `record-pre-one-decision-${Date.now()}`;
    const connection = await NativeConnection.connect({ address: testTemporalAddress() });
    const deps = recordingDeps(stack, taskQueue);
    const oldWorker = () =>
      Worker.create({
        connection,
        taskQueue,
        workflowsPath: require.resolve('./fixtures/pre-one-decision'),
        activities: createActivities(deps),
      });
    try {
      const handle = await (
        await oldWorker()
      ).runUntil(async () => {
        const h = await stack.client.workflow.start(CLAIM_WORKFLOW_TYPE, {
          workflowId,
          taskQueue,
          args: [{ issuerId: issuer.id, claimId }],
        });
        for (let i = 0; i < 600; i++) {
          if ((await stack.db.claim.findUniqueOrThrow({ where: { id: claimId } })).status === 'needs_review') break;
          await new Promise((r) => setTimeout(r, 100));
        }
        return h;
      });
      // No worker polls: both decisions wait in Temporal and reach the run in one workflow task.
      const decisions = [
        { decision: 'approve' as const, actor: 'operator' },
        { decision: 'reject' as const, actor: 'operator', reasonCode: 'duplicate' },
      ].map((d) => handle.executeUpdate(resolveClaimUpdate, { args: [d] }));
      await new Promise((r) => setTimeout(r, 1_000));
      await (
        await oldWorker()
      ).runUntil(async () => {
        await Promise.allSettled(decisions);
        await handle.result();
      });
      const history = await handle.fetchHistory();
      const resolving = (history.events ?? []).filter(
        (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'resolveClaim',
      );
      assert.equal(resolving.length, 2, 'both decisions ran resolveClaim, as the old code let them');
      writeHistory('pre-one-decision-claim-race', history);
    } finally {
      await connection.close();
    }
  });

  /** A fresh sandbox issuer with a group, a cashback merchant activated, and one previewable authorization stored (not handed over). */
  async function sandboxAuthorization() {
    const sandbox = await newIssuer(stack.app);
    const group = (await sandbox.call('POST', '/api/v2/chg', groupBody())).body;
    const merchant = await createMerchant(stack.app);
    await createOffer(stack.app, merchant.id, { cashbackRateBps: 500, startsAt: daysFromNow(-3) });
    await sandbox.call('PUT', `/api/v2/chg/${group.id}/merchant/${merchant.id}/activation`, {});
    const auth = authEvent(cardOf(group), { merchantId: merchant.id });
    return { sandbox, group, merchant, auth };
  }

  it('records a sandbox clock that shortens, then ends, a settlement wait', async () => {
    const { sandbox, auth } = await sandboxAuthorization();
    await sandbox.call('POST', '/api/v1/incoming-auth', auth);
    const authRow = await stack.db.ingestedEvent.findUniqueOrThrow({
      where: { issuerId_kind_externalId: { issuerId: sandbox.id, kind: 'auth', externalId: auth.id } },
    });
    await stack.waitForStatus(authRow.id, ['previewed']);
    // 5 of 10 days: a new timer for the rest; 6 more: the wait ends and the preview lapses.
    assert.equal((await sandbox.call('POST', '/api/v2/sandbox/clock/advance', { days: 5 })).status, 200);
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal((await sandbox.call('POST', '/api/v2/sandbox/clock/advance', { days: 6 })).status, 200);
    await stack.waitForStatus(authRow.id, ['lapsed']);
    await save('lifecycle-sandbox-clock-lapse', authRow.workflowId);
  });

  it('records a run on the code before the sandbox clock that was sent clockAdvanced, settled after the upgrade', async () => {
    const { sandbox, group, merchant, auth } = await sandboxAuthorization();
    const settled = settledEvent(cardOf(group), { merchantId: merchant.id, authorizationId: auth.id });
    const quiet = await startTestApp({ db: stack.db });
    await quiet.request('POST', '/api/v1/incoming-auth', { token: sandbox.token, body: auth });
    await quiet.request('POST', '/api/v1/incoming-txn', { token: sandbox.token, body: settled });
    await quiet.close();
    const authRow = await stack.db.ingestedEvent.findUniqueOrThrow({
      where: { issuerId_kind_externalId: { issuerId: sandbox.id, kind: 'auth', externalId: auth.id } },
    });
    const settledRow = await stack.db.ingestedEvent.findUniqueOrThrow({
      where: { issuerId_kind_externalId: { issuerId: sandbox.id, kind: 'settled', externalId: settled.id } },
    });
    const taskQueue = `record-pre-clock-${Date.now()}`;
    const connection = await NativeConnection.connect({ address: testTemporalAddress() });
    const deps = recordingDeps(stack, taskQueue);
    try {
      const old = await Worker.create({
        connection,
        taskQueue,
        workflowsPath: require.resolve('./fixtures/pre-sandbox-clock'),
        activities: createActivities(deps),
      });
      const handle = await old.runUntil(async () => {
        const h = await stack.client.workflow.signalWithStart(LIFECYCLE_WORKFLOW_TYPE, {
          workflowId: authRow.workflowId,
          taskQueue,
          args: [lifecycleInput(sandbox.id, DEFAULT_SETTLEMENT_TIMEOUT_MS)],
          signal: 'authorization',
          signalArgs: [{ eventId: authRow.id }],
        });
        await stack.waitForStatus(authRow.id, ['previewed']);
        await new Promise((r) => setTimeout(r, 1_000)); // the run reaches its settlement timer
        // An advance during a rolling deploy: the old code has no handler and drops it.
        await h.signal('clockAdvanced', { clockOffsetMs: 11 * 86_400_000 });
        await new Promise((r) => setTimeout(r, 1_000));
        return h;
      });
      const current = await createWorker({ connection, namespace: 'default', taskQueue, deps });
      await current.runUntil(async () => {
        await handle.signal('settlement', { eventId: settledRow.id });
        await handle.result();
      });
      writeHistory('pre-sandbox-clock-signal-then-settle-after-upgrade', await handle.fetchHistory());
    } finally {
      await connection.close();
    }
  });

  it('records a lapsed preview on the time-skipping server', async () => {
    const group = (await issuer.call('POST', '/api/v2/chg', groupBody())).body;
    const merchant = await createMerchant(stack.app);
    await createOffer(stack.app, merchant.id, { cashbackRateBps: 500, startsAt: daysFromNow(-3) });
    await issuer.call('PUT', `/api/v2/chg/${group.id}/merchant/${merchant.id}/activation`, {});
    const auth = authEvent(cardOf(group), { merchantId: merchant.id });
    const quiet = await startTestApp({ db: stack.db });
    await quiet.request('POST', '/api/v1/incoming-auth', { token: issuer.token, body: auth });
    await quiet.close();
    const authRow = await row('auth', auth.id);
    const ts = await startTimeSkipping(stack.db);
    try {
      await ts.withWorker(async () => {
        const handle = await ts.env.client.workflow.signalWithStart(LIFECYCLE_WORKFLOW_TYPE, {
          workflowId: authRow.workflowId,
          taskQueue: ts.taskQueue,
          args: [lifecycleInput(issuer.id, DEFAULT_SETTLEMENT_TIMEOUT_MS)],
          signal: 'authorization',
          signalArgs: [{ eventId: authRow.id }],
        });
        await handle.result();
        writeHistory('lifecycle-auth-lapse', await handle.fetchHistory());
      });
    } finally {
      await ts.teardown();
    }
  });
});

/** What the activities of a recording run with: the test stack's database and Temporal client. */
function recordingDeps(stack: Stack, taskQueue: string) {
  return {
    db: stack.db,
    logger: createLogger('silent'),
    clock: { now: () => new Date() },
    temporal: testEngine(stack.client, taskQueue),
    webhookDestinations: testWebhookDestinations,
    webhookSecretKeys: testWebhookSecretKeys,
  };
}
