// Cardholder reward events end to end on the time-skipping Temporal test server, for a
// production issuer on real (skipped) time: the real worker, API, hand-over and webhook relay
// over the real PostgreSQL, and a real receiver. A branded purchase's grant becomes available,
// comes within 30 and then 7 days of its expiry and expires, each noticed by the ExpireGrants
// workflow run as the hourly schedule runs it (no issuerId); a qualified authorization with no
// settlement lapses after the settlement time-out. Every delivery is checked against the
// published contract (the receiver) and verified as a receiver verifies it (standardwebhooks).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { Webhook } from 'standardwebhooks';
import { DEFAULT_SETTLEMENT_TIMEOUT_MS } from '../../workflows/lifecycle-signals';
import type { TestIssuer } from '../helpers/app';
import { authEvent, settledEvent, storedEvent, type CardRef } from '../helpers/events';
import { assertLedgerHealthy } from '../helpers/ledger';
import { insertEndpoint, startReceiver, storedSecrets, waitFor, type Receiver } from '../helpers/webhooks';
import { purchaseScenario } from '../helpers/scenario';
import { startTimeSkippingStack, type TimeSkippingStack } from '../helpers/time-skipping';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

describe('cardholder reward events (time-skipping, production issuer)', function () {
  this.timeout(180_000);
  let stack: TimeSkippingStack;
  let receiver: Receiver;
  let issuer: TestIssuer;
  let secret: string;
  let group: any;
  let card: CardRef;
  let merchant: any;
  /** Production events name the acquirer's merchant id, which the merchant's match rules list. */
  const acquirerMerchantId = `acq-${randomUUID()}`;

  before(async () => {
    stack = await startTimeSkippingStack({ relay: true });
    receiver = await startReceiver();
    // 10 % in branded balance, spendable from 500 after 2 days, expiring after 60.
    ({ issuer, group, card, merchant } = await purchaseScenario(stack.app, {
      environment: 'production',
      matchRules: { acquirerMerchantIds: [acquirerMerchantId] },
      brandedBalance: { spendMinimumMinor: 500, availabilityDelayDays: 2, expiryDays: 60 },
      offer: { cashbackRateBps: 0, brandedRateBps: 1000 },
    }));
    // A production endpoint must be https (core/webhooks/endpoint-url.ts); the local receiver
    // is http, so the row is written as the API writes it, subscribed to every type.
    await insertEndpoint(stack.db, issuer.id, receiver.url);
    secret = (await storedSecrets(stack.db, issuer.id)).secret;
  });
  after(async () => {
    await stack?.stop();
    await receiver?.close();
  });

  /**
   * As the hourly schedule runs it: every issuer, at the workflow's clock. Polled to its end,
   * not awaited with result(): waiting on a result lets the server skip ahead to the next timer
   * (the purchase's lifecycle has some), and time must move only by skipTo.
   */
  async function expireGrants(): Promise<void> {
    const handle = await stack.env.client.workflow.start('expireGrants', {
      args: [{}],
      taskQueue: stack.engine.taskQueue,
      workflowId: `expire-${randomUUID()}`,
    });
    await waitFor('the expireGrants run', async () => {
      const status = (await handle.describe()).status.name;
      assert.ok(status === 'RUNNING' || status === 'COMPLETED', status);
      return status === 'COMPLETED' || undefined;
    });
  }

  /** The requests of one type received so far, each verified as a receiver verifies it. */
  function received(type: string) {
    return receiver.requests
      .map((r) => ({ ...r, parsed: JSON.parse(r.body) }))
      .filter((r) => r.parsed.type === type)
      .map((r) => {
        const verified = new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as any;
        assert.equal(verified.webhookId, r.headers['webhook-id']);
        return verified;
      });
  }

  /** Waits for the n-th delivery of a type and gives them all, after a pause in which no other may come. */
  async function deliveries(type: string, count: number) {
    await waitFor(`${count} ${type} deliveries`, async () => (received(type).length >= count ? true : undefined));
    await new Promise((r) => setTimeout(r, 500));
    const all = received(type);
    assert.equal(all.length, count, `exactly ${count} ${type}`);
    return all;
  }

  async function processed(kind: 'settled' | 'auth', externalId: string, statuses: string[]) {
    const row = await storedEvent(stack.db, issuer.id, kind, externalId);
    return waitFor(`${kind} ${row.id} to reach ${statuses.join('|')}`, async () => {
      const now = await stack.db.ingestedEvent.findUniqueOrThrow({ where: { id: row.id } });
      return statuses.includes(now.rewardStatus) ? now : undefined;
    });
  }

  it('notices a branded grant as available, 30 and 7 days before expiry, and expired: one delivery each', async () => {
    const event = settledEvent(card, { amount: 10_000, merchantId: acquirerMerchantId });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', event)).status, 204);
    const settled = await processed('settled', event.id, ['matched', 'not_matched', 'unknown']);
    assert.equal(settled.rewardStatus, 'matched');
    const grant = await stack.db.rewardGrant.findFirstOrThrow({
      where: { issuerId: issuer.id, sourceTransactionId: settled.id },
    });
    assert.equal(grant.amountMinor, 1000n);
    const [settlement] = await deliveries('qualified_settlement', 1);
    assert.deepEqual(settlement.data.rewardGrantIds, [grant.id]);

    // Before availability the run finds nothing to say.
    await expireGrants();
    assert.equal(grant.nextNoticeAt?.getTime(), grant.availableAt.getTime());

    // 1. Available: one reward_available, however often the run comes by.
    await stack.skipTo(grant.availableAt.getTime() + HOUR_MS);
    await expireGrants();
    await expireGrants();
    const [available] = await deliveries('reward_available', 1);
    assert.deepEqual(available.data, {
      chgId: group.id,
      merchantId: merchant.id,
      rewardGrantId: grant.id,
      transactionId: settled.id,
      currency: 'usd',
      amountMinor: 1000,
      availableAt: grant.availableAt.toISOString(),
      expiresAt: grant.expiresAt.toISOString(),
    });
    assert.equal(received('reward_expiring').length, 0);

    // 2. and 3. Within 30, then within 7 days of expiry: one reward_expiring each.
    for (const [n, days] of [
      [1, 30],
      [2, 7],
    ]) {
      await stack.skipTo(grant.expiresAt.getTime() - days * DAY_MS + HOUR_MS);
      await expireGrants();
      const expiring = await deliveries('reward_expiring', n);
      assert.deepEqual(expiring[n - 1].data, {
        chgId: group.id,
        merchantId: merchant.id,
        rewardGrantId: grant.id,
        currency: 'usd',
        remainingMinor: 1000,
        expiresAt: grant.expiresAt.toISOString(),
        daysBeforeExpiry: days,
      });
    }

    // 4. Past expiry: the breakage is posted and reward_expired says so.
    await stack.skipTo(grant.expiresAt.getTime() + HOUR_MS);
    await expireGrants();
    const [expired] = await deliveries('reward_expired', 1);
    const event_ = await stack.db.rewardEvent.findFirstOrThrow({
      where: { issuerId: issuer.id, type: 'branded_expired' },
    });
    const breakage = await stack.db.ledgerTransfer.findFirstOrThrow({
      where: { issuerId: issuer.id, kind: 'expire_branded' },
    });
    assert.equal(breakage.amountMinor, 1000n);
    assert.deepEqual(expired.data, {
      chgId: group.id,
      merchantId: merchant.id,
      rewardGrantIds: [grant.id],
      currency: 'usd',
      amountMinor: 1000,
      rewardEventId: event_.id,
    });
    await expireGrants();
    await deliveries('reward_expired', 1);
    await deliveries('reward_expiring', 2);
    await deliveries('reward_available', 1);
    assert.deepEqual(receiver.contractViolations, []);
    await assertLedgerHealthy(stack.db, issuer.id);
  });

  it('sends authorization_lapsed once when a qualified authorization gets no settlement within the time-out', async () => {
    const auth = authEvent(card, { amount: 10_000, merchantId: acquirerMerchantId });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-auth', auth)).status, 204);
    const previewed = await processed('auth', auth.id, ['previewed', 'not_matched', 'unknown']);
    assert.equal(previewed.rewardStatus, 'previewed');
    const [qualified] = await deliveries('qualified_auth', 1);
    assert.equal(qualified.data.authorizationId, previewed.id);
    assert.ok(qualified.data.earnedAmountMinor > 0);

    // Time skips only once the run waits on its settlement timer, so the wait starts now.
    const handle: WorkflowHandle = stack.env.client.workflow.getHandle(previewed.workflowId);
    await waitFor(
      'the settlement timer',
      async () => ((await handle.fetchHistory()).events ?? []).some((e) => e.timerStartedEventAttributes) || undefined,
    );
    await stack.skip(DEFAULT_SETTLEMENT_TIMEOUT_MS - HOUR_MS);
    assert.equal(
      (await stack.db.ingestedEvent.findUniqueOrThrow({ where: { id: previewed.id } })).rewardStatus,
      'previewed',
    );
    assert.equal(received('authorization_lapsed').length, 0);
    await stack.skip(2 * HOUR_MS);
    await processed('auth', auth.id, ['lapsed']);
    const [lapsed] = await deliveries('authorization_lapsed', 1);
    assert.deepEqual(lapsed.data, {
      chgId: group.id,
      merchantId: merchant.id,
      authorizationId: previewed.id,
      externalId: auth.id,
      currency: 'usd',
      previewedAmountMinor: qualified.data.earnedAmountMinor,
    });
    assert.deepEqual(receiver.contractViolations, []);
    await assertLedgerHealthy(stack.db, issuer.id);
  });
  it('sends reward_clawed_back once when a refund takes back the branded balance its purchase earned', async () => {
    const purchase = settledEvent(card, { amount: 10_000, merchantId: acquirerMerchantId });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', purchase)).status, 204);
    const txn = await processed('settled', purchase.id, ['matched', 'not_matched', 'unknown']);
    assert.equal(txn.rewardStatus, 'matched');
    const refund = settledEvent(card, {
      state: 'refunded',
      amount: 4_000,
      relatedTransactionId: purchase.id,
      merchantId: acquirerMerchantId,
    });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', refund)).status, 204);
    const refunded = await processed('settled', refund.id, ['matched', 'not_matched', 'unknown']);
    const [clawedBack] = await deliveries('reward_clawed_back', 1);
    const events = await stack.db.rewardEvent.findMany({
      where: { issuerId: issuer.id, type: { endsWith: '_clawed_back' }, transactionId: txn.id },
    });
    assert.deepEqual(
      events.map((e) => [e.type, e.amountMinor]),
      [['branded_clawed_back', 400n]],
    );
    assert.deepEqual(clawedBack.data, {
      chgId: group.id,
      merchantId: merchant.id,
      transactionId: txn.id,
      refundTransactionId: refunded.id,
      currency: 'usd',
      cashbackAmountMinor: 0,
      brandedAmountMinor: 400,
      owedMinor: 0,
      rewardEventIds: events.map((e) => e.id),
    });
    const detail = (await issuer.call('GET', `/api/v2/chg/${group.id}/transaction/${txn.id}/reward-detail`)).body;
    assert.equal(detail.clawedBackAmountMinor, 400);
    assert.deepEqual(receiver.contractViolations, []);
    await assertLedgerHealthy(stack.db, issuer.id);
  });
});
