// Branded balance end to end, on the time-skipping Temporal test server and the real
// PostgreSQL: earn → not yet available (the issuer delay holds it) → available after the
// delay → spent on a later purchase → the rest expires through the ExpireGrants workflow.
// The lifecycle activities take the workflow's clock, so skipped days move availability and
// expiry; the API reads the same skipped clock.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { TestIssuer } from '../helpers/app';
import { settledEvent, storedEvent, type CardRef } from '../helpers/events';
import { assertLedgerHealthy } from '../helpers/ledger';
import { purchaseScenario } from '../helpers/scenario';
import { startTimeSkippingStack, type TimeSkippingStack } from '../helpers/time-skipping';

const DAY_MS = 86_400_000;

describe('branded balance lifecycle (time-skipping)', function () {
  this.timeout(180_000);
  let stack: TimeSkippingStack;

  before(async () => {
    stack = await startTimeSkippingStack();
  });
  after(() => stack?.stop());

  async function settle(issuer: TestIssuer, card: CardRef, merchantId: string, amount: number): Promise<string> {
    // Dated on the clock the service runs on here (the test server's skipped time): a purchase
    // is decided as of its own date.
    const createdAt = stack.now().toISOString();
    const event = settledEvent(card, { amount, merchantId, createdAt, settledAt: createdAt });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', event)).status, 204);
    const row = await storedEvent(stack.db, issuer.id, 'settled', event.id);
    for (let i = 0; i < 600; i++) {
      const status = (await stack.db.ingestedEvent.findUniqueOrThrow({ where: { id: row.id } })).rewardStatus;
      if (['matched', 'not_matched', 'unknown'].includes(status)) {
        assert.equal(status, 'matched');
        return row.id;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`transaction ${row.id} was not processed`);
  }

  it('earns, waits out the issuer delay, spends, then expires the rest to breakage', async () => {
    // The issuer holds branded balance 5 days, longer than the merchant's 2; spent from 500 up.
    const { issuer, group, card, merchant } = await purchaseScenario(stack.app, {
      settings: { brandedAvailabilityDelayDays: 5 },
      brandedBalance: { spendMinimumMinor: 500, availabilityDelayDays: 2, expiryDays: 30 },
      offer: { cashbackRateBps: 0, brandedRateBps: 1000 },
    });
    const base = `/api/v2/chg/${group.id}`;

    // 1. Earn 10% of 10,000 as branded balance: held by the longer (issuer) delay.
    await settle(issuer, card, merchant.id, 10_000);
    const held = (await issuer.call('GET', `${base}/merchant/${merchant.id}/spend-eligibility?amountMinor=600`)).body;
    assert.deepEqual(
      [held.eligible, held.availableBalanceMinor, held.pendingBalanceMinor, held.spendRestrictionReasons],
      [false, 0, 1000, ['no_available_balance', 'issuer_availability_delay']],
    );

    // 2. After the delay the balance is available.
    await stack.skip(6 * DAY_MS);
    const ready = (await issuer.call('GET', `${base}/merchant/${merchant.id}/spend-eligibility?amountMinor=600`)).body;
    assert.deepEqual([ready.eligible, ready.availableBalanceMinor, ready.spendRestrictionReasons], [true, 1000, []]);

    // 3. A purchase of 600 (above the merchant's 500 minimum) spends 600 of it.
    const spendTxn = await settle(issuer, card, merchant.id, 600);
    const detail = (await issuer.call('GET', `${base}/transaction/${spendTxn}/reward-detail`)).body;
    assert.deepEqual([detail.spentAmountMinor, detail.earnedAmountMinor], [600, 0]);
    const balance = (await issuer.call('GET', `${base}/merchant/${merchant.id}/balance`)).body;
    assert.deepEqual([balance.availableMinor, balance.notYetAvailableMinor, balance.grants.length], [400, 0, 1]);

    // 4. Past the 30-day expiry, the scheduled workflow moves the rest to breakage.
    await stack.skip(25 * DAY_MS);
    const result = await stack.env.client.workflow.execute('expireGrants', {
      args: [{ issuerId: issuer.id }],
      taskQueue: stack.engine.taskQueue,
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
    const trial = (await stack.app.operator('GET', '/admin/v1/ledger/trial-balance')).body;
    const breakage = trial.accounts.find(
      (a: any) => a.kind === 'breakage' && a.issuerId === issuer.id && a.merchantId === merchant.id,
    );
    assert.equal(breakage?.balanceMinor, 400);
    assert.equal(trial.totalMinor, 0);
    await assertLedgerHealthy(stack.db, issuer.id);
  });
});
