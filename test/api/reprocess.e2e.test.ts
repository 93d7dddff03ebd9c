// Reprocessing a settlement that ended `unknown`: the activity fails for good, the fault is
// removed, an operator reprocesses, and the transaction ends matched with one posting.
import assert from 'node:assert/strict';
import { ApplicationFailure } from '@temporalio/activity';
import { startStack, type Stack } from '../helpers/stack';
import { assertError, newIssuer, type TestIssuer } from '../helpers/app';
import { groupBody } from '../helpers/groups';
import { cardOf, settledEvent } from '../helpers/events';
import { createMerchant, createOffer, daysFromNow } from '../helpers/catalogue';
import { assertLedgerHealthy } from '../helpers/ledger';

describe('POST /admin/v1/transactions/{txnId}/reprocess', function () {
  this.timeout(120_000);
  let stack: Stack;
  let issuer: TestIssuer;
  let broken = true;

  before(async () => {
    stack = await startStack({
      faults: {
        beforeActivity(activity) {
          // A permanent fault (say, a corrupt catalogue row) until an operator fixes it.
          if (activity === 'settleTransaction' && broken) throw ApplicationFailure.nonRetryable('catalogue row unreadable', 'INVARIANT_BROKEN');
        },
      },
    });
    issuer = await newIssuer(stack.app);
  });
  after(() => stack.stop());

  it('re-runs a settlement that ended unknown, posting exactly once, and audits it', async () => {
    const group = (await issuer.call('POST', '/api/v2/chg', groupBody())).body;
    const merchant = await createMerchant(stack.app, { brandedBalance: { enabled: false, spendMinimumMinor: 0, availabilityDelayDays: 0, expiryDays: 365 } });
    await createOffer(stack.app, merchant.id, { cashbackRateBps: 1000, startsAt: daysFromNow(-1) });
    await issuer.call('PUT', `/api/v2/chg/${group.id}/merchant/${merchant.id}/activation`, {});
    const event = settledEvent(cardOf(group), { amount: 3_000, merchantId: merchant.id });
    await issuer.call('POST', '/api/v1/incoming-txn', event);
    const row = await stack.db.ingestedEvent.findUniqueOrThrow({ where: { issuerId_kind_externalId: { issuerId: issuer.id, kind: 'settled', externalId: event.id } } });
    assert.equal(await stack.waitForStatus(row.id, ['unknown', 'matched']), 'unknown');
    const detail = await issuer.call('GET', `/api/v2/chg/${group.id}/transaction/${row.id}/reward-detail`);
    assert.equal(detail.body.status, 'unknown');
    assert.match((await stack.db.ingestedEvent.findUniqueOrThrow({ where: { id: row.id } })).failureReason ?? '', /catalogue row unreadable/);

    broken = false;
    const res = await stack.app.operator('POST', `/admin/v1/transactions/${row.id}/reprocess`, { reason: 'catalogue fixed' });
    assert.equal(res.status, 202, res.text);
    assert.deepEqual([res.body.transactionId, res.body.status, res.body.workflowId], [row.id, 'pending', row.workflowId]);
    assert.equal(await stack.waitForStatus(row.id, ['matched', 'unknown']), 'matched');
    assert.equal(await stack.db.ledgerTransfer.count({ where: { transactionId: row.id } }), 1);
    assert.equal((await issuer.call('GET', `/api/v2/chg/${group.id}/transaction/${row.id}/reward-detail`)).body.earnedAmountMinor, 300);

    const audit = await stack.app.operator('GET', '/admin/v1/audit-log?limit=20');
    const entry = audit.body.data.find((e: any) => e.action === 'transaction.reprocess' && e.targetId === row.id);
    assert.ok(entry, 'audited');
    assert.equal(entry.actor, 'operator');
    assert.equal(entry.details.reason, 'catalogue fixed');

    assertError(await stack.app.operator('POST', `/admin/v1/transactions/${row.id}/reprocess`, {}), 409, 'not_reprocessable');
    await assertLedgerHealthy(stack.db, issuer.id);
  });

  it('answers 404 for an unknown transaction and 400 for a malformed id', async () => {
    assertError(await stack.app.operator('POST', '/admin/v1/transactions/txn_00000000-0000-0000-0000-000000000000/reprocess', {}), 404, 'transaction_not_found');
    assertError(await stack.app.operator('POST', '/admin/v1/transactions/nope/reprocess', {}), 400, 'invalid_id');
  });
});
