// The settlement time-out (default 10 days) on the time-skipping test server: the real
// workflow and activities, with the 10 days skipped rather than shortened.
import assert from 'node:assert/strict';
import { startTestApp, newIssuer, type TestApp, type TestIssuer } from '../helpers/app';
import { groupBody } from '../helpers/groups';
import { authEvent, cardOf, settledEvent } from '../helpers/events';
import { createMerchant, createOffer, daysFromNow } from '../helpers/catalogue';
import { startTimeSkipping, type TimeSkippingStack } from '../helpers/time-skipping';
import { assertLedgerHealthy } from '../helpers/ledger';
import { LIFECYCLE_WORKFLOW_TYPE, lifecycleInput } from '../../workflows/lifecycle-signals';
import { DEFAULT_SETTLEMENT_TIMEOUT_MS } from '../../workflows/lifecycle-signals';

describe('TransactionLifecycle settlement time-out (time-skipping)', function () {
  this.timeout(120_000);
  let app: TestApp;
  let issuer: TestIssuer;
  let ts: TimeSkippingStack;
  let group: any;
  let merchant: any;

  before(async () => {
    app = await startTestApp();
    issuer = await newIssuer(app);
    group = (await issuer.call('POST', '/api/v2/chg', groupBody())).body;
    merchant = await createMerchant(app);
    await createOffer(app, merchant.id, { cashbackRateBps: 500, startsAt: daysFromNow(-10), endsAt: daysFromNow(300) });
    await issuer.call('PUT', `/api/v2/chg/${group.id}/merchant/${merchant.id}/activation`, {});
    ts = await startTimeSkipping(app.db);
  });
  after(async () => {
    await ts?.teardown();
    await app.close();
  });

  async function ingest(path: string, event: any, kind: 'auth' | 'settled') {
    assert.equal((await issuer.call('POST', path, event)).status, 204);
    return app.db.ingestedEvent.findUniqueOrThrow({ where: { issuerId_kind_externalId: { issuerId: issuer.id, kind, externalId: event.id } } });
  }

  it('defaults to 10 days', () => assert.equal(DEFAULT_SETTLEMENT_TIMEOUT_MS, 10 * 86_400_000));

  it('lapses the preview when no settlement arrives within 10 days', async () => {
    const auth = await ingest('/api/v1/incoming-auth', authEvent(cardOf(group), { merchantId: merchant.id }), 'auth');
    await ts.withWorker(async () => {
      const started = await ts.env.currentTimeMs();
      const handle = await ts.env.client.workflow.signalWithStart(LIFECYCLE_WORKFLOW_TYPE, {
        workflowId: auth.workflowId, taskQueue: ts.taskQueue, args: [lifecycleInput(issuer.id)], signal: 'authorization', signalArgs: [{ eventId: auth.id }],
      });
      const summary: any = await handle.result();
      assert.deepEqual(summary.steps.map((s: any) => s.status), ['previewed', 'lapsed']);
      assert.ok((await ts.env.currentTimeMs()) - started >= DEFAULT_SETTLEMENT_TIMEOUT_MS, 'ten days passed on the server clock');
    });
    assert.equal((await app.db.ingestedEvent.findUniqueOrThrow({ where: { id: auth.id } })).rewardStatus, 'lapsed');
    await assertLedgerHealthy(app.db, issuer.id);
  });

  it('settles normally when the settlement arrives on day 9', async () => {
    const authBody = authEvent(cardOf(group), { merchantId: merchant.id, amount: 4_000 });
    const auth = await ingest('/api/v1/incoming-auth', authBody, 'auth');
    const settled = await ingest('/api/v1/incoming-txn', settledEvent(cardOf(group), { merchantId: merchant.id, amount: 4_000, authorizationId: authBody.id }), 'settled');
    await ts.withWorker(async () => {
      const handle = await ts.env.client.workflow.signalWithStart(LIFECYCLE_WORKFLOW_TYPE, {
        workflowId: auth.workflowId, taskQueue: ts.taskQueue, args: [lifecycleInput(issuer.id)], signal: 'authorization', signalArgs: [{ eventId: auth.id }],
      });
      await ts.env.sleep('9 days');
      await handle.signal('settlement', { eventId: settled.id });
      const summary: any = await handle.result();
      assert.deepEqual(summary.steps.map((s: any) => s.status), ['previewed', 'matched']);
    });
    const row = await app.db.ingestedEvent.findUniqueOrThrow({ where: { id: settled.id } });
    assert.equal(row.rewardStatus, 'matched');
    assert.equal((await app.db.ingestedEvent.findUniqueOrThrow({ where: { id: auth.id } })).rewardStatus, 'previewed');
    await assertLedgerHealthy(app.db, issuer.id);
  });
});
