// The Temporal Schedules the worker creates (worker/schedules.ts), as a real server holds
// them, and the hourly expiry as its schedule runs it: every issuer, more grants than one
// batch, each expired once.
import assert from 'node:assert/strict';
import { ScheduleOverlapPolicy } from '@temporalio/client';
import { startStack, type Stack } from '../helpers/stack';
import { earnBranded, inTransaction, trialBalance } from '../../core/domain/ledger';
import {
  EXPIRE_GRANTS_SCHEDULE_ID,
  HANDOVER_SWEEPER_SCHEDULE_ID,
  WEBHOOK_RETENTION_SCHEDULE_ID,
  ensureSchedules,
} from '../../worker/schedules';
import { DEFAULT_EXPIRY_BATCH_SIZE } from '../../workflows/expire-grants';
import type { ExpireGrantsResult } from '../../workflows/expire-grants-contract';
import {
  assertLedgerHealthy,
  chgId as newChg,
  key,
  ledgerIssuer,
  merchantId as newMerchant,
  plusDays,
} from '../helpers/ledger';

describe('Temporal Schedules', function () {
  this.timeout(180_000);
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    // The schedules are namespace-wide: leave none behind for the rest of the run.
    for (const id of [EXPIRE_GRANTS_SCHEDULE_ID, HANDOVER_SWEEPER_SCHEDULE_ID, WEBHOOK_RETENTION_SCHEDULE_ID])
      await stack.client.schedule
        .getHandle(id)
        .delete()
        .catch(() => undefined);
    await stack.stop();
  });

  it('creates the sweeper (every minute), the expiry and the webhook retention (hourly), overlap SKIP, once however often the worker starts', async () => {
    await ensureSchedules(stack.client, stack.taskQueue);
    await ensureSchedules(stack.client, stack.taskQueue); // a second worker start
    const expected = {
      [HANDOVER_SWEEPER_SCHEDULE_ID]: ['handoverSweeper', 60_000],
      [EXPIRE_GRANTS_SCHEDULE_ID]: ['expireGrants', 3_600_000],
      [WEBHOOK_RETENTION_SCHEDULE_ID]: ['webhookRetention', 3_600_000],
    } as const;
    for (const [id, [workflowType, everyMs]] of Object.entries(expected)) {
      const described = await stack.client.schedule.getHandle(id).describe();
      assert.equal(described.action.type, 'startWorkflow');
      assert.equal((described.action as { workflowType: string }).workflowType, workflowType);
      assert.equal((described.action as { taskQueue: string }).taskQueue, stack.taskQueue);
      assert.deepEqual(
        described.spec.intervals?.map((i) => Number(i.every)),
        [everyMs],
        id,
      );
      assert.equal(described.policies.overlap, ScheduleOverlapPolicy.SKIP);
    }
  });

  it('expires the grants of every issuer past expiry, more than one batch, once, when the expiry schedule runs', async () => {
    const perIssuer = 130; // two issuers: 260 grants, two batches of 200
    const now = new Date();
    const t0 = plusDays(now, -40);
    const issuers = [await ledgerIssuer(stack.db), await ledgerIssuer(stack.db)];
    for (const issuerId of issuers) {
      const chgId = newChg();
      const merchantId = newMerchant();
      await inTransaction(stack.db, async (tx) => {
        for (let i = 0; i < perIssuer; i++) {
          await earnBranded(tx, {
            idempotencyKey: key('earn'),
            issuerId,
            chgId,
            merchantId,
            amountMinor: 10,
            at: t0,
            availableAt: t0,
            expiresAt: plusDays(t0, 30),
          });
        }
      });
    }
    assert.ok(perIssuer * issuers.length > DEFAULT_EXPIRY_BATCH_SIZE);
    await ensureSchedules(stack.client, stack.taskQueue);
    const schedule = stack.client.schedule.getHandle(EXPIRE_GRANTS_SCHEDULE_ID);
    const before = (await schedule.describe()).info.recentActions.length;
    await schedule.trigger();
    let workflowId: string | undefined;
    for (let i = 0; i < 100 && !workflowId; i++) {
      const actions = (await schedule.describe()).info.recentActions;
      if (actions.length > before) workflowId = actions[actions.length - 1].action.workflow.workflowId;
      else await new Promise((r) => setTimeout(r, 200));
    }
    assert.ok(workflowId, 'the schedule started a run');
    const result: ExpireGrantsResult = await stack.client.workflow.getHandle(workflowId).result();
    assert.ok(result.batches >= 2, JSON.stringify(result));
    assert.ok(result.expired >= perIssuer * issuers.length, JSON.stringify(result)); // other tests' expired grants may join
    for (const issuerId of issuers) {
      assert.equal(await stack.db.rewardGrant.count({ where: { issuerId, remainingMinor: { gt: 0 } } }), 0);
      assert.equal(
        await stack.db.ledgerTransfer.count({ where: { issuerId, kind: 'expire_branded' } }),
        perIssuer,
        'one expiry per grant',
      );
      const byKind = Object.fromEntries(
        (await trialBalance(stack.db, { issuerId })).accounts.map((a) => [a.kind, a.balanceMinor]),
      );
      assert.deepEqual([byKind.chg_branded, byKind.breakage], [0, perIssuer * 10]);
      await assertLedgerHealthy(stack.db, issuerId);
    }
  });
});
