// The sandbox simulation routes end to end, on the real API, worker,
// PostgreSQL and Temporal dev server: a sandbox issuer's test clock moves grant availability,
// branded balance expiry and the settlement time-out for that issuer only, each observed within
// a minute of the move, and cashback from on hold to payable past its return window; forced
// outcomes go through ingestion and the real lifecycle; production issuers are refused with 403
// sandbox_only.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startStack, type Stack } from '../helpers/stack';
import { assertError, type TestIssuer } from '../helpers/app';
import { settledEvent, storedEvent } from '../helpers/events';
import { activate, activatedMerchant, groupWithCard, issuerWith, merchantWithOffer } from '../helpers/scenario';
import { assertLedgerHealthy } from '../helpers/ledger';

const DAY_MS = 86_400_000;
const OBSERVED_WITHIN_MS = 60_000;

/** Polls `read` until `done` holds for its value; fails after a minute with the last value. */
async function eventually<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + OBSERVED_WITHIN_MS;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    assert.ok(Date.now() < deadline, `${what}: still ${JSON.stringify(value)} after ${OBSERVED_WITHIN_MS / 1000} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('sandbox simulation: test clock and forced outcomes', function () {
  this.timeout(240_000);
  let stack: Stack;
  let merchant: any;

  /** A sandbox (or production) issuer with one group, its card, and the merchant activated. */
  async function issuerWithGroup(environment: 'sandbox' | 'production' = 'sandbox') {
    const issuer = await issuerWith(stack.app, { environment });
    const { group, card } = await groupWithCard(issuer);
    await activate(issuer, group.id, merchant.id);
    return { issuer, group, card, cardId: card.cardId };
  }

  const simulate = async (issuer: TestIssuer, body: Record<string, unknown>) => {
    const res = await issuer.call('POST', '/api/v2/sandbox/transactions', {
      merchantId: merchant.id,
      amount: 10_000,
      ...body,
    });
    assert.equal(res.status, 201, res.text);
    return res.body;
  };
  const advance = async (issuer: TestIssuer, body: Record<string, unknown>) => {
    const res = await issuer.call('POST', '/api/v2/sandbox/clock/advance', body);
    assert.equal(res.status, 200, res.text);
    return res.body;
  };
  const summary = async (issuer: TestIssuer, chgId: string) =>
    (await issuer.call('GET', `/api/v2/chg/${chgId}/rewards/summary`)).body;
  const status = async (eventId: string) =>
    (await stack.db.ingestedEvent.findUniqueOrThrow({ where: { id: eventId } })).rewardStatus;

  async function assertBalanced(issuer: TestIssuer) {
    await assertLedgerHealthy(stack.db, issuer.id);
    const trial = await stack.app.operator('GET', `/admin/v1/ledger/trial-balance?issuerId=${issuer.id}`);
    assert.equal(trial.status, 200, trial.text);
    assert.equal(trial.body.totalMinor, 0);
  }

  before(async () => {
    stack = await startStack();
    // 5% cashback and 3% branded balance, available after 3 days, expiring after 30.
    ({ merchant } = await merchantWithOffer(stack.app, {
      brandedBalance: { availabilityDelayDays: 3, expiryDays: 30 },
      offer: { cashbackRateBps: 500, brandedRateBps: 300 },
    }));
  });
  after(() => stack?.stop());

  it('refuses production issuers with 403 sandbox_only', async () => {
    const { issuer, cardId } = await issuerWithGroup('production');
    assertError(await issuer.call('GET', '/api/v2/sandbox/clock'), 403, 'sandbox_only');
    assertError(await issuer.call('POST', '/api/v2/sandbox/clock/advance', { days: 1 }), 403, 'sandbox_only');
    assertError(
      await issuer.call('POST', '/api/v2/sandbox/transactions', {
        cardId,
        merchantId: merchant.id,
        amount: 100,
        outcome: 'settled',
      }),
      403,
      'sandbox_only',
    );
    const stored = await stack.db.issuer.findUniqueOrThrow({ where: { id: issuer.id } });
    assert.equal(stored.clockOffsetMs, 0n);
  });

  it('refuses an advance of nothing and reads a fresh clock at real time', async () => {
    const { issuer } = await issuerWithGroup();
    assertError(await issuer.call('POST', '/api/v2/sandbox/clock/advance', { days: 0, hours: 0 }), 400, 'invalid_body');
    assertError(await issuer.call('POST', '/api/v2/sandbox/clock/advance', {}), 400, 'invalid_body');
    const clock = (await issuer.call('GET', '/api/v2/sandbox/clock')).body;
    assert.equal(clock.clockOffsetMs, 0);
    assert.ok(Math.abs(Date.parse(clock.now) - Date.now()) < 5_000);
  });

  it('walks a branded grant from earned to available to expired on the issuer clock, leaving another issuer unaffected', async () => {
    const { issuer, group, cardId } = await issuerWithGroup();
    const other = await issuerWithGroup();
    const purchase = await simulate(issuer, { cardId, outcome: 'settled' });
    const theirs = await simulate(other.issuer, { cardId: other.cardId, outcome: 'settled' });
    assert.equal(purchase.chgId, group.id);
    assert.deepEqual(
      purchase.events.map((e: any) => [e.endpoint, e.state]),
      [
        ['/api/v1/incoming-auth', 'approved'],
        ['/api/v1/incoming-txn', 'settled'],
      ],
    );
    await stack.waitForStatus(purchase.transactionId, ['matched']);
    await stack.waitForStatus(theirs.transactionId, ['matched']);
    const earned = await summary(issuer, group.id);
    assert.equal(earned.brandedBalance.earnedMinor, 300);
    assert.equal(earned.brandedBalance.notYetAvailableMinor, 300);
    assert.equal(earned.brandedBalance.availableMinor, 0);

    // Three days later on this issuer's clock, the grant is available.
    const moved = await advance(issuer, { days: 3, hours: 1 });
    assert.equal(moved.clockOffsetMs, 3 * DAY_MS + 3_600_000);
    assert.ok(Math.abs(Date.parse(moved.now) - (Date.now() + moved.clockOffsetMs)) < 5_000);
    await eventually(
      'available after the advance',
      () => summary(issuer, group.id),
      (s) => s.brandedBalance.availableMinor === 300 && s.brandedBalance.notYetAvailableMinor === 0,
    );
    const spend = (
      await issuer.call('GET', `/api/v2/chg/${group.id}/merchant/${merchant.id}/spend-eligibility?amountMinor=100`)
    ).body;
    assert.equal(spend.availableBalanceMinor, 300);
    assert.equal(spend.eligible, true);

    // The other sandbox issuer's clock did not move: its grant still waits.
    assert.equal((await other.issuer.call('GET', '/api/v2/sandbox/clock')).body.clockOffsetMs, 0);
    const theirSummary = await summary(other.issuer, other.group.id);
    assert.equal(theirSummary.brandedBalance.notYetAvailableMinor, 300);
    assert.equal(theirSummary.brandedBalance.availableMinor, 0);

    // Thirty days on, the grant has expired: the advance's expiry run posts it to breakage.
    const expiring = (await issuer.call('GET', `/api/v2/chg/${group.id}/rewards/expiring?withinDays=30`)).body;
    assert.equal(expiring.data.length, 1);
    await advance(issuer, { days: 30 });
    await eventually(
      'expiry posted',
      () => stack.db.rewardEvent.findMany({ where: { issuerId: issuer.id, type: 'branded_expired' } }),
      (rows) => rows.length === 1,
    );
    const after = await summary(issuer, group.id);
    assert.equal(after.brandedBalance.expiredMinor, 300);
    assert.equal(after.brandedBalance.availableMinor, 0);
    assert.equal(after.brandedBalance.earnedMinor, 300);
    const grant = await stack.db.rewardGrant.findFirstOrThrow({ where: { issuerId: issuer.id } });
    assert.equal(grant.remainingMinor, 0n);
    const activity = (await issuer.call('GET', `/api/v2/chg/${group.id}/rewards/activity`)).body;
    assert.equal(activity.data[0].type, 'branded_expired', 'the expiry is the newest row, dated on the issuer clock');
    // The other issuer's grant is untouched.
    assert.equal(
      (await stack.db.rewardGrant.findFirstOrThrow({ where: { issuerId: other.issuer.id } })).remainingMinor,
      300n,
    );
    await assertBalanced(issuer);
    await assertBalanced(other.issuer);
  });

  it('moves cashback from on hold to payable when the issuer clock passes its return window, for that issuer only', async () => {
    const { issuer, group, cardId } = await issuerWithGroup();
    const other = await issuerWithGroup();
    const purchase = await simulate(issuer, { cardId, outcome: 'settled' });
    const theirs = await simulate(other.issuer, { cardId: other.cardId, outcome: 'settled' });
    await stack.waitForStatus(purchase.transactionId, ['matched']);
    await stack.waitForStatus(theirs.transactionId, ['matched']);
    const cashback = async (who: TestIssuer, chgId: string) => {
      const c = (await summary(who, chgId)).cashback;
      return { onHold: c.onHoldMinor, payable: c.payableMinor, paidOut: c.paidOutMinor };
    };
    assert.deepEqual(await cashback(issuer, group.id), { onHold: 500, payable: 0, paidOut: 0 });

    // 29 days on the issuer's clock: still inside the issuer's default 30-day window.
    assert.equal((await advance(issuer, { days: 29 })).clockOffsetMs, 29 * DAY_MS);
    assert.deepEqual(await cashback(issuer, group.id), { onHold: 500, payable: 0, paidOut: 0 });
    const early = await stack.app.request('POST', `/api/v2/chg/${group.id}/payouts`, {
      token: issuer.token,
      body: {},
      headers: { 'Idempotency-Key': `early-${randomUUID()}` },
    });
    assertError(early, 409, 'insufficient_balance');

    // Past it, the cashback is payable, and paid.
    await advance(issuer, { days: 1, hours: 1 });
    await eventually(
      'payable after the advance',
      () => cashback(issuer, group.id),
      (c) => c.onHold === 0 && c.payable === 500,
    );
    const paid = await stack.app.request('POST', `/api/v2/chg/${group.id}/payouts`, {
      token: issuer.token,
      body: {},
      headers: { 'Idempotency-Key': `paid-${randomUUID()}` },
    });
    assert.equal(paid.status, 201, paid.text);
    assert.deepEqual([paid.body.groupCount, paid.body.totalMinor], [1, 500]);
    assert.deepEqual(await cashback(issuer, group.id), { onHold: 0, payable: 0, paidOut: 500 });

    // The other sandbox issuer's clock did not move: its cashback is still on hold.
    assert.deepEqual(await cashback(other.issuer, other.group.id), { onHold: 500, payable: 0, paidOut: 0 });
    await assertBalanced(issuer);
    await assertBalanced(other.issuer);
  });

  it('lapses a waiting authorization once its settlement time-out has passed on the issuer clock', async () => {
    const { issuer, group, cardId } = await issuerWithGroup();
    const purchase = await simulate(issuer, { cardId, outcome: 'authorized' });
    assert.equal(purchase.transactionId, null);
    await stack.waitForStatus(purchase.authorizationId, ['previewed']);
    assert.equal((await summary(issuer, group.id)).cashback.pendingMinor, 500);

    // Five of the ten days: the run is told, recomputes, and keeps waiting.
    const first = await advance(issuer, { days: 5 });
    assert.equal(first.waitingAuthorizationsNotified, 1);
    await new Promise((r) => setTimeout(r, 2_000));
    assert.equal(await status(purchase.authorizationId), 'previewed');

    // Six more: past the time-out, so the preview lapses.
    const second = await advance(issuer, { days: 6 });
    assert.equal(second.waitingAuthorizationsNotified, 1);
    await eventually(
      'lapsed after the advance',
      () => status(purchase.authorizationId),
      (s) => s === 'lapsed',
    );
    assert.equal((await summary(issuer, group.id)).cashback.pendingMinor, 0);
    const run = await stack.client.workflow.getHandle(`txn/${issuer.id}/${purchase.events[0].id}`).describe();
    assert.equal(run.status.name, 'COMPLETED');
    await assertBalanced(issuer);
  });

  it('keeps an authorization whose issuer clock starts ahead waiting its full time-out from the preview', async () => {
    const { issuer, cardId } = await issuerWithGroup();
    await advance(issuer, { days: 20 });
    const purchase = await simulate(issuer, { cardId, outcome: 'authorized' });
    await stack.waitForStatus(purchase.authorizationId, ['previewed']);
    // Measured from the preview (offset 20 days), 9 more days are inside the time-out.
    assert.equal((await advance(issuer, { days: 9 })).waitingAuthorizationsNotified, 1);
    await new Promise((r) => setTimeout(r, 2_000));
    assert.equal(await status(purchase.authorizationId), 'previewed');
    await advance(issuer, { days: 1, hours: 1 });
    await eventually(
      'lapsed',
      () => status(purchase.authorizationId),
      (s) => s === 'lapsed',
    );
    await assertBalanced(issuer);
  });

  it('matches an event without an mp_ id by the catalogue rules, as production does, and still forces an mp_ id', async () => {
    const brand = `ACME${randomUUID().slice(0, 8).toUpperCase()}`;
    const { issuer, group, card } = await issuerWithGroup();
    const { merchant: ruled } = await activatedMerchant(stack.app, issuer, group.id, {
      matchRules: { descriptorPatterns: [`${brand} ROASTERS`], acquirerMerchantIds: [`${brand}-MID`] },
      offer: { cashbackRateBps: 500 },
    });
    const send = async (overrides: Record<string, unknown>) => {
      const event = settledEvent(card, { amount: 2_000, ...overrides });
      assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', event)).status, 204);
      const row = await storedEvent(stack.db, issuer.id, 'settled', event.id);
      await stack.waitForStatus(row.id, ['matched', 'not_matched']);
      return (await issuer.call('GET', `/api/v2/chg/${group.id}/transaction/${row.id}/match-trace`)).body;
    };
    const byDescriptor = await send({ merchantDescriptor: `SQ *${brand} ROASTERS 12` });
    assert.deepEqual(
      [byDescriptor.status, byDescriptor.merchantId, byDescriptor.trace.merchantMatch.rule],
      ['matched', ruled.id, 'descriptor_pattern'],
    );
    const byAcquirerId = await send({ merchantId: `${brand}-MID`, merchantDescriptor: 'SOMETHING ELSE' });
    assert.deepEqual(
      [byAcquirerId.status, byAcquirerId.merchantId, byAcquirerId.trace.merchantMatch.rule],
      ['matched', ruled.id, 'acquirer_merchant_id'],
    );
    // An mp_ id still wins over the descriptor.
    const forced = await send({ merchantId: merchant.id, merchantDescriptor: `SQ *${brand} ROASTERS 12` });
    assert.deepEqual([forced.merchantId, forced.trace.merchantMatch.rule], [merchant.id, 'sandbox_merchant_id']);
    await assertBalanced(issuer);
  });

  it('forces declined, reversed and refunded outcomes through the real lifecycle', async () => {
    const { issuer, group, cardId } = await issuerWithGroup();
    const declined = await simulate(issuer, { cardId, outcome: 'declined' });
    assert.equal(await status(declined.authorizationId), 'not_matched');

    const reversed = await simulate(issuer, { cardId, outcome: 'reversed' });
    assert.deepEqual(
      reversed.events.map((e: any) => e.state),
      ['approved', 'reversed'],
    );
    await stack.waitForStatus(reversed.authorizationId, ['voided']);

    const refunded = await simulate(issuer, { cardId, outcome: 'refunded', amount: 4_000, refundAmount: 2_000 });
    assert.deepEqual(
      refunded.events.map((e: any) => e.state),
      ['approved', 'settled', 'refunded'],
    );
    await stack.waitForStatus(refunded.refundTransactionId, ['matched', 'reversed']);
    const detail = (
      await issuer.call('GET', `/api/v2/chg/${group.id}/transaction/${refunded.transactionId}/reward-detail`)
    ).body;
    assert.equal(detail.status, 'matched');
    assert.equal(detail.earnedAmountMinor, 320, '5% cashback and 3% branded of 4000');
    assert.equal(detail.clawedBackAmountMinor, 160, 'half of it, for half the amount refunded');
    const webhooks = await stack.db.webhook.findMany({ where: { issuerId: issuer.id }, select: { type: true } });
    assert.deepEqual(webhooks.map((w) => w.type).sort(), ['qualified_auth', 'qualified_auth', 'qualified_settlement']);

    assertError(
      await issuer.call('POST', '/api/v2/sandbox/transactions', {
        cardId: 'no-such-card',
        merchantId: merchant.id,
        amount: 100,
        outcome: 'settled',
      }),
      404,
      'card_not_found',
    );
    assertError(
      await issuer.call('POST', '/api/v2/sandbox/transactions', {
        cardId,
        merchantId: merchant.id,
        amount: 100,
        outcome: 'settled',
        refundAmount: 50,
      }),
      400,
      'invalid_body',
    );
    await assertBalanced(issuer);
  });
});
