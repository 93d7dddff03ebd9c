// Reprocessing a settlement that ended `unknown`: the activity fails for good, the fault is
// removed, an operator reprocesses, and the transaction ends matched with one posting. Each
// event marked unknown is counted once in rewards_lifecycle_outcomes_total.
import assert from 'node:assert/strict';
import { ApplicationFailure } from '@temporalio/activity';
import { INVARIANT_BROKEN } from '../../core/failure-types';
import { startStack, type Stack } from '../helpers/stack';
import { assertError, newIssuer, type TestIssuer } from '../helpers/app';
import { authEvent, settledEvent, storedEvent } from '../helpers/events';
import { transactionCommands } from '../../scripts/admin/transaction-commands';
import { runAdminCommand } from '../helpers/admin-cli';
import { parseArgs } from '../../scripts/admin/command';
import { activatedMerchant, groupWithCard } from '../helpers/scenario';
import { assertLedgerHealthy } from '../helpers/ledger';
import { lifecycleOutcomes } from '../../core/metrics';

/** Events marked unknown as the worker counts them (the stack runs in this process). */
async function markedUnknown(): Promise<number> {
  const { values } = await lifecycleOutcomes.get();
  return values.find((v) => v.labels.step === 'markUnknown' && v.labels.status === 'unknown')?.value ?? 0;
}

describe('POST /admin/v1/transactions/{txnId}/reprocess', function () {
  this.timeout(120_000);
  let stack: Stack;
  let issuer: TestIssuer;
  let broken = true;
  let brokenPreviews = false;

  before(async () => {
    stack = await startStack({
      faults: {
        beforeActivity(activity) {
          // A permanent fault (say, a corrupt catalogue row) until an operator fixes it.
          if (activity === 'settleTransaction' && broken)
            throw ApplicationFailure.nonRetryable('catalogue row unreadable', INVARIANT_BROKEN);
          if (activity === 'previewAuthorization' && brokenPreviews)
            throw ApplicationFailure.nonRetryable('catalogue row unreadable', INVARIANT_BROKEN);
        },
      },
    });
    issuer = await newIssuer(stack.app);
  });
  after(() => stack.stop());

  it('re-runs a settlement that ended unknown, posting exactly once, and audits it', async () => {
    const unknownBefore = await markedUnknown();
    const { group, card } = await groupWithCard(issuer);
    const { merchant } = await activatedMerchant(stack.app, issuer, group.id, { offer: { cashbackRateBps: 1000 } });
    const event = settledEvent(card, { amount: 3_000, merchantId: merchant.id });
    await issuer.call('POST', '/api/v1/incoming-txn', event);
    const row = await storedEvent(stack.db, issuer.id, 'settled', event.id);
    assert.equal(await stack.waitForStatus(row.id, ['unknown', 'matched']), 'unknown');
    const detail = await issuer.call('GET', `/api/v2/chg/${group.id}/transaction/${row.id}/reward-detail`);
    assert.equal(detail.body.status, 'unknown');
    assert.match(
      (await stack.db.ingestedEvent.findUniqueOrThrow({ where: { id: row.id } })).failureReason ?? '',
      /catalogue row unreadable/,
    );

    broken = false;
    const res = await stack.app.operator('POST', `/admin/v1/transactions/${row.id}/reprocess`, {
      reason: 'catalogue fixed',
    });
    assert.equal(res.status, 202, res.text);
    assert.deepEqual(
      [res.body.transactionId, res.body.status, res.body.workflowId],
      [row.id, 'pending', row.workflowId],
    );
    assert.equal(await stack.waitForStatus(row.id, ['matched', 'unknown']), 'matched');
    assert.equal(await stack.db.ledgerTransfer.count({ where: { transactionId: row.id } }), 1);
    assert.equal((await markedUnknown()) - unknownBefore, 1, 'counted once as unknown, not again once matched');
    assert.equal(
      (await issuer.call('GET', `/api/v2/chg/${group.id}/transaction/${row.id}/reward-detail`)).body.earnedAmountMinor,
      300,
    );

    const audit = await stack.app.operator('GET', '/admin/v1/audit-log?limit=20');
    const entry = audit.body.data.find((e: any) => e.action === 'transaction.reprocess' && e.targetId === row.id);
    assert.ok(entry, 'audited');
    assert.equal(entry.actor, 'root');
    assert.equal(entry.details.reason, 'catalogue fixed');

    assertError(
      await stack.app.operator('POST', `/admin/v1/transactions/${row.id}/reprocess`, {}),
      409,
      'not_reprocessable',
    );
    await assertLedgerHealthy(stack.db, issuer.id);
  });

  it('re-runs an authorization whose preview ended unknown, by the operator route (no body) and by the admin CLI', async () => {
    const { group, card } = await groupWithCard(issuer);
    const { merchant } = await activatedMerchant(stack.app, issuer, group.id, { offer: { cashbackRateBps: 1000 } });
    brokenPreviews = true;
    const unknownBefore = await markedUnknown();
    const auths = [];
    for (let i = 0; i < 2; i++) {
      const event = authEvent(card, { amount: 2_000, merchantId: merchant.id });
      assert.equal((await issuer.call('POST', '/api/v1/incoming-auth', event)).status, 204);
      const row = await storedEvent(stack.db, issuer.id, 'auth', event.id);
      assert.equal(await stack.waitForStatus(row.id, ['unknown', 'previewed']), 'unknown');
      auths.push(row);
    }
    brokenPreviews = false;

    const res = await stack.app.operator('POST', `/admin/v1/transactions/${auths[0].id}/reprocess`);
    assert.equal(res.status, 202, res.text);
    assert.deepEqual([res.body.transactionId, res.body.workflowId], [auths[0].id, auths[0].workflowId]);

    const printed = await runAdminCommand(stack, transactionCommands[0], [auths[1].id, '--reason', 'catalogue fixed']);
    assert.deepEqual(printed, [
      { transactionId: auths[1].id, status: 'pending', previousStatus: 'unknown', workflowId: auths[1].workflowId },
    ]);

    for (const auth of auths) {
      assert.equal(await stack.waitForStatus(auth.id, ['previewed', 'unknown']), 'previewed');
      const previewed = await stack.db.ingestedEvent.findUniqueOrThrow({ where: { id: auth.id } });
      assert.equal((previewed.matchTrace as any).preview.cashbackMinor, 200);
      assert.equal((await stack.db.webhook.findFirst({ where: { sourceEventId: auth.id } }))?.type, 'qualified_auth');
    }
    assert.equal((await markedUnknown()) - unknownBefore, 2, 'each authorization counted once as unknown');
    const audits = await stack.db.operatorAuditLog.findMany({
      where: { action: 'transaction.reprocess', targetId: { in: auths.map((a) => a.id) } },
    });
    assert.deepEqual(audits.map((a) => a.actor).sort(), ['cli:test', 'root']);
    await assert.rejects(
      transactionCommands[0].run(parseArgs(['chg_00000000-0000-0000-0000-000000000000']), {} as never),
      /is not a txn_ or auth_ id/,
    );
    await assertLedgerHealthy(stack.db, issuer.id);
  });

  it('answers 404 for an unknown transaction and 400 for a malformed id', async () => {
    assertError(
      await stack.app.operator('POST', '/admin/v1/transactions/txn_00000000-0000-0000-0000-000000000000/reprocess', {}),
      404,
      'transaction_not_found',
    );
    assertError(await stack.app.operator('POST', '/admin/v1/transactions/nope/reprocess', {}), 400, 'invalid_id');
    assertError(
      await stack.app.operator('POST', '/admin/v1/transactions/auth_00000000-0000-0000-0000-000000000000/reprocess'),
      404,
      'transaction_not_found',
    );
  });
});
