// The transaction lifecycle end to end: HTTP ingestion → hand-over → TransactionLifecycle
// on a real Temporal server → activities on real PostgreSQL → reconciliation over HTTP.
import assert from 'node:assert/strict';
import { startStack, type Stack } from '../helpers/stack';
import { newIssuer, type TestIssuer } from '../helpers/app';
import { groupBody } from '../helpers/groups';
import { authEvent, cardOf, settledEvent, storedEvent, type CardRef } from '../helpers/events';
import { activate, activatedMerchant, merchantWithOffer, purchaseScenario } from '../helpers/scenario';
import { assertLedgerHealthy } from '../helpers/ledger';

describe('TransactionLifecycle end to end', function () {
  this.timeout(120_000);
  let stack: Stack;
  let issuer: TestIssuer;
  let group: any;
  let card: CardRef;
  let merchant: any;
  let offer: any;
  let cashbackMerchant: any;

  before(async () => {
    stack = await startStack();
    // 5 % cashback and 2 % branded balance, activated through the offer.
    ({ issuer, group, card, merchant, offer } = await purchaseScenario(stack.app, {
      brandedBalance: true,
      offer: { cashbackRateBps: 500, brandedRateBps: 200 },
      presentedOffer: true,
    }));
    // The same offer at a merchant without branded balance: cashback only.
    ({ merchant: cashbackMerchant } = await activatedMerchant(stack.app, issuer, group.id, {
      offer: { cashbackRateBps: 500, brandedRateBps: 200 },
    }));
  });
  after(() => stack.stop());
  afterEach(() => assertLedgerHealthy(stack.db, issuer.id));

  const stored = (kind: 'auth' | 'settled', externalId: string) => storedEvent(stack.db, issuer.id, kind, externalId);
  const detail = async (txnId: string) =>
    (await issuer.call('GET', `/api/v2/chg/${group.id}/transaction/${txnId}/reward-detail`)).body;

  it('previews on authorization, then posts cashback and a branded grant on settlement', async () => {
    const auth = authEvent(card, { amount: 10_000, merchantId: merchant.id });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-auth', auth)).status, 204);
    const authRow = await stored('auth', auth.id);
    assert.equal(await stack.waitForStatus(authRow.id, ['previewed', 'not_matched']), 'previewed');
    const previewed = await stored('auth', auth.id);
    assert.deepEqual((previewed.matchTrace as any).preview, {
      cashbackMinor: 500,
      brandedMinor: 200,
      spentMinor: 0,
      earnedAmountMinor: 700,
    });
    assert.equal(await stack.db.ledgerTransfer.count({ where: { issuerId: issuer.id } }), 0, 'a preview posts nothing');
    const authWebhook = await stack.db.webhook.findFirst({ where: { sourceEventId: authRow.id } });
    assert.equal(authWebhook?.type, 'qualified_auth');

    const settled = settledEvent(card, { amount: 10_000, merchantId: merchant.id, authorizationId: auth.id });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', settled)).status, 204);
    const txn = await stored('settled', settled.id);
    assert.equal(txn.workflowId, authRow.workflowId);
    assert.equal(await stack.waitForStatus(txn.id, ['matched', 'not_matched', 'unknown']), 'matched');
    const d = await detail(txn.id);
    assert.deepEqual(
      { ...d, rewardEventIds: d.rewardEventIds.length },
      {
        transactionId: txn.id,
        status: 'matched',
        merchantId: merchant.id,
        earnedAmountMinor: 700,
        spentAmountMinor: 0,
        clawedBackAmountMinor: 0,
        currency: 'usd',
        rewardEventIds: 2,
      },
    );
    const grants = await stack.db.rewardGrant.findMany({ where: { issuerId: issuer.id, sourceTransactionId: txn.id } });
    assert.equal(grants.length, 1);
    assert.equal(grants[0].amountMinor, 200n);
    const webhook = await stack.db.webhook.findFirst({ where: { sourceEventId: txn.id } });
    assert.equal(webhook?.type, 'qualified_settlement');
    assert.deepEqual((webhook!.data as any).rewardEventIds.sort(), [...d.rewardEventIds].sort());
    assert.equal((webhook!.data as any).authorizationId, authRow.id);
    const trace = (await issuer.call('GET', `/api/v2/chg/${group.id}/transaction/${txn.id}/match-trace`)).body;
    assert.equal(trace.trace.winningOfferId, offer.id);
    assert.equal(trace.trace.merchantMatch.rule, 'sandbox_merchant_id');
    assert.equal(trace.trace.arithmetic.cashbackMinor, 500);
  });

  it('spends the available branded balance first and earns on the rest', async () => {
    const settled = settledEvent(card, { amount: 2_000, merchantId: merchant.id });
    await issuer.call('POST', '/api/v1/incoming-txn', settled);
    const txn = await stored('settled', settled.id);
    assert.equal(await stack.waitForStatus(txn.id, ['matched', 'not_matched', 'unknown']), 'matched');
    const d = await detail(txn.id);
    // 200 of balance from the first purchase is spent; 1,800 earns 5% + 2%.
    assert.deepEqual([d.spentAmountMinor, d.earnedAmountMinor], [200, 90 + 36]);
  });

  it('settles without a prior authorization, earning no branded balance where the merchant has none', async () => {
    const settled = settledEvent(card, { amount: 2_000, merchantId: cashbackMerchant.id });
    await issuer.call('POST', '/api/v1/incoming-txn', settled);
    const txn = await stored('settled', settled.id);
    assert.equal(await stack.waitForStatus(txn.id, ['matched', 'not_matched', 'unknown']), 'matched');
    const d = await detail(txn.id);
    assert.deepEqual([d.earnedAmountMinor, d.spentAmountMinor, d.rewardEventIds.length], [100, 0, 1]);
  });

  it('ends not_matched with the merchant id when the merchant is not activated, and says why', async () => {
    const { merchant: other } = await merchantWithOffer(stack.app);
    const settled = settledEvent(card, { merchantId: other.id });
    await issuer.call('POST', '/api/v1/incoming-txn', settled);
    const txn = await stored('settled', settled.id);
    assert.equal(await stack.waitForStatus(txn.id, ['matched', 'not_matched', 'unknown']), 'not_matched');
    const d = await detail(txn.id);
    assert.deepEqual([d.status, d.merchantId, d.earnedAmountMinor, d.rewardEventIds], ['not_matched', other.id, 0, []]);
    assert.equal(d.currency, undefined);
    const trace = (await issuer.call('GET', `/api/v2/chg/${group.id}/transaction/${txn.id}/match-trace`)).body.trace;
    assert.deepEqual(trace.earn.reasons, ['merchant_not_activated']);
    const failed = trace.earn.offers[0].conditions.filter((c: any) => !c.passed).map((c: any) => c.name);
    assert.deepEqual(failed, ['activation_before_transaction']);
  });

  it('ends not_matched for a non-usd purchase', async () => {
    const settled = settledEvent(card, { merchantId: merchant.id, currency: 'eur' });
    await issuer.call('POST', '/api/v1/incoming-txn', settled);
    const txn = await stored('settled', settled.id);
    assert.equal(await stack.waitForStatus(txn.id, ['matched', 'not_matched', 'unknown']), 'not_matched');
    const trace = (await issuer.call('GET', `/api/v2/chg/${group.id}/transaction/${txn.id}/match-trace`)).body.trace;
    assert.deepEqual(trace.checks.find((c: any) => c.name === 'currency_usd').passed, false);
  });

  it('claws back 40% on a 40% refund and everything on the rest, then reports reversed', async () => {
    const purchase = settledEvent(card, { amount: 10_000, merchantId: cashbackMerchant.id });
    await issuer.call('POST', '/api/v1/incoming-txn', purchase);
    const txn = await stored('settled', purchase.id);
    await stack.waitForStatus(txn.id, ['matched']);

    const partial = settledEvent(card, {
      state: 'refunded',
      amount: 4_000,
      relatedTransactionId: purchase.id,
      merchantId: cashbackMerchant.id,
    });
    await issuer.call('POST', '/api/v1/incoming-txn', partial);
    const partialRow = await stored('settled', partial.id);
    await stack.waitForStatus(partialRow.id, ['matched', 'not_matched', 'unknown']);
    assert.equal((await detail(txn.id)).clawedBackAmountMinor, 200);
    assert.equal((await detail(txn.id)).status, 'matched');
    assert.equal((await detail(partialRow.id)).clawedBackAmountMinor, 200);

    const rest = settledEvent(card, {
      state: 'refunded',
      amount: 6_000,
      relatedTransactionId: purchase.id,
      merchantId: cashbackMerchant.id,
    });
    await issuer.call('POST', '/api/v1/incoming-txn', rest);
    const restRow = await stored('settled', rest.id);
    await stack.waitForStatus(restRow.id, ['matched', 'not_matched', 'unknown']);
    const final = await detail(txn.id);
    assert.deepEqual([final.status, final.earnedAmountMinor, final.clawedBackAmountMinor], ['reversed', 500, 500]);
  });

  it("claws a refund back in its purchase's group only: another group's card is refused, a moved cardholder's refund is booked where the purchase was", async () => {
    const body = groupBody();
    const home = (await issuer.call('POST', '/api/v2/chg', body)).body;
    await activate(issuer, home.id, cashbackMerchant.id);
    const moving = cardOf(home);
    const purchase = settledEvent(moving, { amount: 10_000, merchantId: cashbackMerchant.id });
    await issuer.call('POST', '/api/v1/incoming-txn', purchase);
    const txn = await stored('settled', purchase.id);
    assert.equal(await stack.waitForStatus(txn.id, ['matched', 'not_matched', 'unknown']), 'matched');

    const stranger = settledEvent(card, {
      state: 'refunded',
      amount: 10_000,
      relatedTransactionId: purchase.id,
      merchantId: cashbackMerchant.id,
    });
    const refused = await issuer.call('POST', '/api/v1/incoming-txn', stranger);
    assert.deepEqual([refused.status, refused.body[0]?.error.reasonCode], [400, 'related_transaction_mismatch']);

    assert.equal(
      (await issuer.call('DELETE', `/api/v2/chg/${home.id}/cardholder/${home.cardholders[0].id}`)).status,
      200,
    );
    const away = (await issuer.call('POST', '/api/v2/chg', groupBody({ cardholders: body.cardholders }))).body;
    const refund = settledEvent(moving, {
      state: 'refunded',
      amount: 4_000,
      relatedTransactionId: purchase.id,
      merchantId: cashbackMerchant.id,
    });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', refund)).status, 204);
    const refundRow = await stored('settled', refund.id);
    assert.equal(await stack.waitForStatus(refundRow.id, ['matched', 'not_matched', 'unknown']), 'matched');
    const detailIn = (chgId: string, txnId: string) =>
      issuer.call('GET', `/api/v2/chg/${chgId}/transaction/${txnId}/reward-detail`);
    assert.equal((await detailIn(home.id, refundRow.id)).body.clawedBackAmountMinor, 200);
    assert.equal((await detailIn(away.id, refundRow.id)).status, 404, "the refund is not the new group's");
    const cashback = async (chgId: string) =>
      (await issuer.call('GET', `/api/v2/chg/${chgId}/rewards/summary`)).body.cashback;
    assert.deepEqual([(await cashback(home.id)).earnedMinor, (await cashback(home.id)).balanceMinor], [500, 300]);
    assert.deepEqual([(await cashback(away.id)).clawedBackMinor, (await cashback(away.id)).balanceMinor], [0, 0]);
  });

  it('voids the preview when the authorization is reversed before settlement', async () => {
    const auth = authEvent(card, { merchantId: merchant.id });
    await issuer.call('POST', '/api/v1/incoming-auth', auth);
    const row = await stored('auth', auth.id);
    await stack.waitForStatus(row.id, ['previewed']);
    const preview = ((await stored('auth', auth.id)).matchTrace as any).preview;
    // 5% of what is left after the group's available branded balance is spent first.
    assert.equal(preview.cashbackMinor, Math.floor((2_500 - preview.spentMinor) * 0.05));
    assert.ok(preview.cashbackMinor > 0);
    const pendingBefore = (await issuer.call('GET', `/api/v2/chg/${group.id}/rewards/summary`)).body.cashback
      .pendingMinor;
    await issuer.call('POST', '/api/v1/incoming-auth', { ...auth, state: 'reversed' });
    assert.equal(await stack.waitForStatus(row.id, ['voided']), 'voided');
    const pendingAfter = (await issuer.call('GET', `/api/v2/chg/${group.id}/rewards/summary`)).body.cashback
      .pendingMinor;
    assert.equal(pendingBefore - pendingAfter, preview.cashbackMinor, 'the voided preview no longer counts as pending');
    assert.equal(
      await stack.db.ledgerTransfer.count({ where: { transactionId: row.id } }),
      0,
      'a preview never posted, so nothing to undo',
    );
  });

  it('answers 404 for another group, another issuer and a missing transaction', async () => {
    const settled = settledEvent(card, { merchantId: merchant.id });
    await issuer.call('POST', '/api/v1/incoming-txn', settled);
    const txn = await stored('settled', settled.id);
    const otherGroup = (await issuer.call('POST', '/api/v2/chg', groupBody())).body;
    assert.equal(
      (await issuer.call('GET', `/api/v2/chg/${otherGroup.id}/transaction/${txn.id}/reward-detail`)).status,
      404,
    );
    const intruder = await newIssuer(stack.app);
    assert.equal(
      (await intruder.call('GET', `/api/v2/chg/${group.id}/transaction/${txn.id}/reward-detail`)).status,
      404,
    );
    assert.equal(
      (
        await issuer.call(
          'GET',
          `/api/v2/chg/${group.id}/transaction/txn_00000000-0000-0000-0000-000000000000/reward-detail`,
        )
      ).status,
      404,
    );
    const overviews = await issuer.call('POST', `/api/v2/chg/${group.id}/transactions/reward-overviews`, {
      transactionIds: [txn.id, 'txn_00000000-0000-0000-0000-000000000000'],
      externalIds: [settled.id, 'nope'],
    });
    assert.equal(overviews.status, 200);
    assert.equal(overviews.body.data.length, 2);
    assert.deepEqual(overviews.body.notFound, ['txn_00000000-0000-0000-0000-000000000000', 'nope']);
  });
});
