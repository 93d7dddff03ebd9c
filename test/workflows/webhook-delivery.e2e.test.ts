// End to end: events ingested over HTTP run the TransactionLifecycle, whose webhooks reach a
// local receiver with the documented, signed envelope. The receiver checks every body
// against the webhooks section of /openapi.json (test/helpers/webhooks.ts).
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { startStack, type Stack } from '../helpers/stack';
import { authEvent, settledEvent, storedEvent } from '../helpers/events';
import { purchaseScenario } from '../helpers/scenario';
import { configureEndpoint, startReceiver, waitFor, waitForWebhookStatus, type Receiver } from '../helpers/webhooks';

/** 5 % cashback and 2 % branded balance, available at once. */
const BRANDED_PURCHASE = { brandedBalance: true, offer: { cashbackRateBps: 500, brandedRateBps: 200 } } as const;

describe('WebhookDelivery end to end', function () {
  this.timeout(120_000);
  let stack: Stack;
  let receiver: Receiver;

  before(async () => {
    stack = await startStack();
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await stack.stop();
  });

  it('delivers qualified_settlement for a matched settlement with the audit chain in data', async () => {
    const { issuer, group, card, merchant } = await purchaseScenario(stack.app, BRANDED_PURCHASE);
    const secret = await configureEndpoint(issuer, receiver.url);

    const settled = settledEvent(card, { amount: 10_000, merchantId: merchant.id });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', settled)).status, 204);
    const txn = await storedEvent(stack.db, issuer.id, 'settled', settled.id);
    assert.equal(await stack.waitForStatus(txn.id, ['matched', 'not_matched', 'unknown']), 'matched');

    const request = await waitFor('the qualified_settlement webhook', async () =>
      receiver.requests.find((r) => JSON.parse(r.body).data?.transactionId === txn.id),
    );
    const envelope = new Webhook(secret).verify(request.body, request.headers as Record<string, string>) as any;
    const record = await stack.db.webhook.findFirstOrThrow({ where: { sourceEventId: txn.id } });
    assert.deepEqual(Object.keys(envelope).sort(), ['createdAt', 'data', 'type', 'webhookId']);
    assert.deepEqual(
      [envelope.webhookId, envelope.type, envelope.createdAt],
      [record.id, 'qualified_settlement', record.createdAt.toISOString()],
    );
    assert.equal(request.headers['webhook-id'], record.id);
    assert.match(record.id, /^evt_/);
    const events = await stack.db.rewardEvent.findMany({ where: { transactionId: txn.id }, select: { id: true } });
    assert.deepEqual(
      {
        chgId: envelope.data.chgId,
        transactionId: envelope.data.transactionId,
        externalId: envelope.data.externalId,
        merchantId: envelope.data.merchantId,
      },
      { chgId: group.id, transactionId: txn.id, externalId: settled.id, merchantId: merchant.id },
    );
    assert.equal(envelope.data.rewardEventIds.length, 2);
    assert.ok(envelope.data.rewardEventIds.every((id: string) => id.startsWith('brevt_')));
    assert.ok(envelope.data.rewardGrantIds.length === 1 && envelope.data.rewardGrantIds[0].startsWith('rg_'));
    assert.equal(envelope.data.earnedAmountMinor, 700);
    assert.deepEqual([...envelope.data.rewardEventIds].sort(), events.map((e) => e.id).sort());
    const delivered = await waitForWebhookStatus(stack.db, record.id, ['delivered']);
    assert.equal(delivered.attemptCount, 1);
    const listed = (await issuer.call('GET', '/api/v2/webhooks?status=delivered&type=qualified_settlement')).body.data;
    assert.deepEqual(
      listed.map((w: any) => w.webhookId),
      [record.id],
    );
  });

  it('names the amounts of both types as reward-detail does, and the settlement’s equal what reward-detail reports', async () => {
    const { issuer, group, card, merchant } = await purchaseScenario(stack.app, BRANDED_PURCHASE);
    await configureEndpoint(issuer, receiver.url);
    const bodyOf = async (what: string, match: (data: any) => boolean) =>
      JSON.parse((await waitFor(what, async () => receiver.requests.find((r) => match(JSON.parse(r.body).data)))).body);

    const auth = authEvent(card, { amount: 10_000, merchantId: merchant.id });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-auth', auth)).status, 204);
    const authBody = await bodyOf('the qualified_auth webhook', (d) => d.externalId === auth.id);
    assert.equal(authBody.type, 'qualified_auth');
    const amounts = { earnedAmountMinor: 700, cashbackAmountMinor: 500, brandedAmountMinor: 200, spentAmountMinor: 0 };
    assert.deepEqual(pick(authBody.data, Object.keys(amounts)), amounts);
    assert.deepEqual([authBody.data.rewardEventIds, authBody.data.rewardGrantIds], [[], []]);

    const settled = settledEvent(card, { amount: 10_000, merchantId: merchant.id, authorizationId: auth.id });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', settled)).status, 204);
    const settlementBody = await bodyOf('the qualified_settlement webhook', (d) => d.externalId === settled.id);
    assert.deepEqual(pick(settlementBody.data, Object.keys(amounts)), amounts);
    assert.equal(settlementBody.data.authorizationId, authBody.data.authorizationId);
    const detail = (
      await issuer.call('GET', `/api/v2/chg/${group.id}/transaction/${settlementBody.data.transactionId}/reward-detail`)
    ).body;
    assert.deepEqual(
      [
        settlementBody.data.earnedAmountMinor,
        settlementBody.data.spentAmountMinor,
        [...settlementBody.data.rewardEventIds].sort(),
      ],
      [detail.earnedAmountMinor, detail.spentAmountMinor, [...detail.rewardEventIds].sort()],
    );
    assert.deepEqual(receiver.contractViolations, []);
  });
});

const pick = (o: Record<string, unknown>, keys: string[]) => Object.fromEntries(keys.map((k) => [k, o[k]]));
