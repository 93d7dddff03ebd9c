// An authorization that arrives after its purchase was settled (issuers' feeds do not
// promise order) is recorded against the settlement: no preview, no qualified_auth webhook,
// no wait for a settlement that already happened, and the ledger untouched.
import assert from 'node:assert/strict';
import { startStack, type Stack } from '../helpers/stack';
import { handovers } from '../../core/metrics';
import type { TestIssuer } from '../helpers/app';
import { authEvent, settledEvent, storedEvent, type CardRef } from '../helpers/events';
import { purchaseScenario } from '../helpers/scenario';
import { assertLedgerHealthy } from '../helpers/ledger';
import { RewardsStatus } from '../../workflows/search-attributes';

describe('late authorizations', function () {
  this.timeout(120_000);
  // Armed by a test: runs once before the settlement activity of this event id.
  let beforeSettlement: { eventId: string; run: () => Promise<void> } | undefined;
  let stack: Stack;
  let issuer: TestIssuer;
  let group: any;
  let card: CardRef;
  let merchant: any;

  before(async () => {
    stack = await startStack({
      faults: {
        async beforeActivity(activity, eventId) {
          if (activity !== 'settleTransaction' || beforeSettlement?.eventId !== eventId) return;
          const armed = beforeSettlement;
          beforeSettlement = undefined;
          await armed.run();
        },
      },
    });
    ({ issuer, group, card, merchant } = await purchaseScenario(stack.app, { offer: { cashbackRateBps: 500 } }));
  });
  after(() => stack.stop());
  afterEach(() => assertLedgerHealthy(stack.db, issuer.id));

  const stored = (kind: 'auth' | 'settled', externalId: string) => storedEvent(stack.db, issuer.id, kind, externalId);

  /** Everything that says the late authorization changed nothing but its own record. */
  async function assertRecordedAgainst(authExternalId: string, settlementId: string) {
    const auth = await stored('auth', authExternalId);
    assert.equal(
      await stack.waitForStatus(auth.id, ['after_settlement', 'previewed', 'not_matched', 'unknown']),
      'after_settlement',
    );
    const recorded = await stored('auth', authExternalId);
    assert.deepEqual(recorded.matchTrace, { outcome: 'after_settlement', settlementId });
    assert.equal(recorded.merchantId, merchant.id);
    assert.equal(await stack.db.webhook.count({ where: { sourceEventId: auth.id } }), 0, 'no qualified_auth webhook');
    assert.equal(await stack.db.ledgerTransfer.count({ where: { transactionId: auth.id } }), 0);
    const transfers = await stack.db.ledgerTransfer.findMany({ where: { transactionId: settlementId } });
    assert.deepEqual(
      transfers.map((t) => t.amountMinor),
      [200n],
      'the settlement posted once, 5% of 4000',
    );
    const summary = (await issuer.call('GET', `/api/v2/chg/${group.id}/rewards/summary`)).body;
    assert.equal(summary.cashback.pendingMinor, 0, 'nothing shows as pending');
    // Nothing left waiting: every run of the purchase has completed.
    const runs = [];
    for await (const run of stack.client.workflow.list({ query: `WorkflowId = '${auth.workflowId}'` })) runs.push(run);
    assert.ok(runs.length >= 1);
    for (const run of runs) {
      const result = await stack.client.workflow.getHandle(auth.workflowId, run.runId).result();
      assert.ok(result, 'the run completed');
    }
    return runs;
  }

  it('records an authorization that arrives after its purchase finished, in a run that ends at once', async () => {
    const auth = authEvent(card, { amount: 4_000, merchantId: merchant.id });
    const settled = settledEvent(card, { amount: 4_000, merchantId: merchant.id, authorizationId: auth.id });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', settled)).status, 204);
    const txn = await stored('settled', settled.id);
    assert.equal(await stack.waitForStatus(txn.id, ['matched', 'not_matched', 'unknown']), 'matched');
    await stack.client.workflow.getHandle(txn.workflowId).result();

    assert.equal((await issuer.call('POST', '/api/v1/incoming-auth', auth)).status, 204);
    const runs = await assertRecordedAgainst(auth.id, txn.id);
    assert.equal(runs.length, 2, 'the settlement’s run and the short run that recorded the authorization');
    // Handed over again (the sweeper's repeat), it starts nothing new.
    assert.equal((await issuer.call('POST', '/api/v1/incoming-auth', auth)).status, 204);
    assert.equal(
      await stack.db.ingestedEvent.count({ where: { issuerId: issuer.id, kind: 'auth', externalId: auth.id } }),
      1,
    );
  });

  it('records an authorization that reaches the purchase’s run while its settlement is being posted', async () => {
    const auth = authEvent(card, { amount: 4_000, merchantId: merchant.id });
    const settled = settledEvent(card, { amount: 4_000, merchantId: merchant.id, authorizationId: auth.id });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', settled)).status, 204);
    const txn = await stored('settled', settled.id);
    let authHandedOver = false;
    beforeSettlement = {
      eventId: txn.id,
      // The authorization is stored and signalled to the running workflow before the
      // settlement's step starts, so the run takes it after the settlement.
      run: async () => {
        // Handed over: Temporal took the signal (its queue row stays until the event is processed,
        // and the history shows the signal only once the running workflow task completes).
        const handedOver = async () => (await handovers.get()).values[0]?.value ?? 0;
        const before = await handedOver();
        assert.equal((await issuer.call('POST', '/api/v1/incoming-auth', auth)).status, 204);
        for (let i = 0; i < 100 && !authHandedOver; i++) {
          authHandedOver = (await handedOver()) > before;
          if (!authHandedOver) await new Promise((r) => setTimeout(r, 50));
        }
      },
    };
    assert.equal(await stack.waitForStatus(txn.id, ['matched', 'not_matched', 'unknown']), 'matched');
    assert.ok(authHandedOver, 'the authorization was signalled while the settlement was pending');
    const runs = await assertRecordedAgainst(auth.id, txn.id);
    assert.equal(runs.length, 1, 'one run took both');
    const described = await stack.client.workflow.getHandle(txn.workflowId).describe();
    assert.equal(
      described.typedSearchAttributes.get(RewardsStatus),
      'matched',
      'the purchase still shows its settlement’s outcome',
    );
    // Which of the two the run took first depends on when the signal reached it (a workflow
    // task that saw it arrive is retried with both signals at hand); the outcome does not.
    const summary = await stack.client.workflow.getHandle(txn.workflowId).result();
    assert.deepEqual(summary.steps.map((s: any) => s.status).sort(), ['after_settlement', 'matched']);
  });
});
