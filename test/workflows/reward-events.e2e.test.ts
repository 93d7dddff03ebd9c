// Cardholder reward events end to end on a sandbox issuer, through the real API, worker,
// relay, PostgreSQL and Temporal dev server: every fact of a branded purchase's life reaches a
// receiver that verifies it with the standardwebhooks library (and checks its body against the
// published contract), exactly once, whatever the clock moves, scans and replays around it.
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { startStack, type Stack } from '../helpers/stack';
import type { TestIssuer } from '../helpers/app';
import type { CardRef } from '../helpers/events';
import { purchaseScenario } from '../helpers/scenario';
import { assertLedgerHealthy } from '../helpers/ledger';
import { configureEndpoint, startReceiver, waitFor, type Receiver } from '../helpers/webhooks';
import { webhookAttempts } from '../../core/metrics';
import { FACT_WEBHOOK_TYPES } from '../../core/webhooks/fact-webhooks';

interface Delivered {
  webhookId: string;
  type: string;
  createdAt: string;
  data: any;
}

describe('cardholder reward events (sandbox, end to end)', function () {
  this.timeout(300_000);
  let stack: Stack;
  let receiver: Receiver;
  let issuer: TestIssuer;
  let secret: string;
  let group: any;
  let merchant: any;
  let card: CardRef;

  before(async () => {
    stack = await startStack();
    receiver = await startReceiver();
    // 5% cashback and 5% branded balance, spendable after 3 days, expiring after 60.
    ({ issuer, group, card, merchant } = await purchaseScenario(stack.app, {
      environment: 'sandbox',
      brandedBalance: { availabilityDelayDays: 3, expiryDays: 60 },
      offer: { cashbackRateBps: 500, brandedRateBps: 500 },
    }));
    secret = await configureEndpoint(issuer, receiver.url);
  });
  after(async () => {
    await stack?.stop();
    await receiver?.close();
  });

  /**
   * Every request received so far, verified with the library an issuer would use, as it is
   * first seen: the library refuses a webhook-timestamp more than 5 minutes old, as it should.
   */
  const verified: Delivered[] = [];
  function delivered(): Delivered[] {
    for (const r of receiver.requests.slice(verified.length))
      verified.push(new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as Delivered);
    return verified;
  }
  const ofType = (type: string, match: (data: any) => boolean = () => true) =>
    delivered().filter((d) => d.type === type && match(d.data));

  /** Waits until exactly `count` distinct webhooks of a type (and match) have arrived. */
  async function received(type: string, match: (data: any) => boolean, count = 1): Promise<Delivered[]> {
    return waitFor(`${count} × ${type}`, async () => {
      const ids = new Set(ofType(type, match).map((d) => d.webhookId));
      assert.ok(ids.size <= count, `more than ${count} ${type}: ${[...ids].join(', ')}`);
      return ids.size === count ? [...new Map(ofType(type, match).map((d) => [d.webhookId, d])).values()] : undefined;
    });
  }

  /** Records of a fact: the database's view, whatever the receiver saw. */
  const records = (type: string, path: string, value: string) =>
    stack.db.webhook.count({ where: { issuerId: issuer.id, type, data: { path: [path], equals: value } } });

  const advance = async (body: Record<string, unknown>) => {
    const res = await issuer.call('POST', '/api/v2/sandbox/clock/advance', body);
    assert.equal(res.status, 200, res.text);
    return res.body;
  };
  /** The clock advance's scan has run to its end: its expireGrants run completed. */
  const scanned = async (moved: { expiryWorkflowId: string }) =>
    stack.client.workflow.getHandle(moved.expiryWorkflowId).result();
  const simulate = async (body: Record<string, unknown>) => {
    const res = await issuer.call('POST', '/api/v2/sandbox/transactions', {
      cardId: card.cardId,
      merchantId: merchant.id,
      ...body,
    });
    assert.equal(res.status, 201, res.text);
    return res.body;
  };

  it('tells a branded reward from settlement to availability, expiry notices, clawback and expiry', async () => {
    // A $9 purchase: 45 cents cashback and a 45-cent grant.
    const purchase = await simulate({ amount: 900, outcome: 'settled' });
    const [settled] = await received('qualified_settlement', (d) => d.transactionId === purchase.transactionId);
    const grantId: string = settled.data.rewardGrantIds[0];
    const ofGrant = (d: any) => d.rewardGrantId === grantId;

    // Three days on, it is spendable: one reward_available.
    await scanned(await advance({ days: 3 }));
    const [available] = await received('reward_available', ofGrant);
    assert.deepEqual([available.data.amountMinor, available.data.transactionId], [45, purchase.transactionId]);
    assert.equal(available.data.merchantId, merchant.id);

    // 30 days before its expiry (day 30 of 60): one reward_expiring with 30.
    await scanned(await advance({ days: 27 }));
    const [thirty] = await received('reward_expiring', (d) => ofGrant(d) && d.daysBeforeExpiry === 30);
    assert.deepEqual([thirty.data.remainingMinor, thirty.data.expiresAt], [45, available.data.expiresAt]);

    // The clock advanced twice more over the same window, concurrently: nothing new is due.
    const twice = await Promise.all([advance({ hours: 1 }), advance({ hours: 1 })]);
    await Promise.all(twice.map(scanned));
    assert.equal(await records('reward_expiring', 'rewardGrantId', grantId), 1);
    assert.equal(await records('reward_available', 'rewardGrantId', grantId), 1);

    // 7 days before: one reward_expiring with 7.
    await scanned(await advance({ days: 23 }));
    await received('reward_expiring', (d) => ofGrant(d) && d.daysBeforeExpiry === 7);
    assert.equal(await records('reward_expiring', 'rewardGrantId', grantId), 2);

    // Past its expiry: one reward_expired, for what the ledger moved to breakage.
    await scanned(await advance({ days: 8 }));
    const [expired] = await received('reward_expired', (d) => d.rewardGrantIds.includes(grantId));
    const breakage = await stack.db.rewardEvent.findUniqueOrThrow({ where: { id: expired.data.rewardEventId } });
    assert.deepEqual([breakage.type, breakage.amountMinor, breakage.rewardGrantId], ['branded_expired', 45n, grantId]);
    assert.equal(expired.data.amountMinor, 45);
    // Entries are signed debits: the breakage account (income) is credited.
    const credited = await stack.db.$queryRaw<Array<{ minor: number }>>`
      SELECT (-e.amount_minor)::int AS minor FROM ledger_entry e
        JOIN ledger_transfer t ON t.id = e.transfer_id JOIN ledger_account a ON a.id = e.account_id
       WHERE t.idempotency_key = ${`expire:${grantId}`} AND a.kind = 'breakage'`;
    assert.deepEqual(
      credited.map((r) => r.minor),
      [45],
      'the breakage account got what the event says expired',
    );
    await assertLedgerHealthy(stack.db, issuer.id);
  });

  it('tells a partial refund once, with the amounts reward-detail shows', async () => {
    // $9 settled, then $3 of it refunded: a third of 45 + 45 comes back.
    const sim = await simulate({ amount: 900, outcome: 'refunded', refundAmount: 300 });
    const [clawed] = await received('reward_clawed_back', (d) => d.refundTransactionId === sim.refundTransactionId);
    assert.equal(clawed.data.transactionId, sim.transactionId);
    assert.deepEqual([clawed.data.cashbackAmountMinor, clawed.data.brandedAmountMinor], [15, 15]);
    const detail = (await issuer.call('GET', `/api/v2/chg/${group.id}/transaction/${sim.transactionId}/reward-detail`))
      .body;
    assert.equal(detail.clawedBackAmountMinor, clawed.data.cashbackAmountMinor + clawed.data.brandedAmountMinor);
    for (const id of clawed.data.rewardEventIds) assert.ok(detail.rewardEventIds.includes(id), id);
    assert.equal(await records('reward_clawed_back', 'refundTransactionId', sim.refundTransactionId), 1);
    await assertLedgerHealthy(stack.db, issuer.id);
  });

  it('tells an authorization that lapsed without settlement, with what its preview said', async () => {
    const auth = await simulate({ amount: 900, outcome: 'authorized' });
    const [preview] = await received('qualified_auth', (d) => d.authorizationId === auth.authorizationId);
    await scanned(await advance({ days: 11 }));
    const [lapsed] = await received('authorization_lapsed', (d) => d.authorizationId === auth.authorizationId);
    assert.equal(lapsed.data.previewedAmountMinor, preview.data.earnedAmountMinor);
    assert.equal(lapsed.data.externalId, preview.data.externalId);
  });

  it('sends a replayed event again under the same webhookId, and records no second event', async () => {
    const [first] = ofType('reward_available');
    const replay = await issuer.call('POST', `/api/v2/webhooks/${first.webhookId}/replay`);
    assert.equal(replay.status, 202, replay.text);
    await waitFor('the replay', async () =>
      ofType('reward_available').filter((d) => d.webhookId === first.webhookId).length === 2 ? true : undefined,
    );
    assert.equal(await records('reward_available', 'rewardGrantId', first.data.rewardGrantId), 1);
  });

  it('lists the records of a new type with GET /api/v2/webhooks?type=', async () => {
    const listed = await issuer.call('GET', '/api/v2/webhooks?type=reward_expiring');
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(listed.body.data.map((w: any) => w.data.daysBeforeExpiry).sort(), [30, 7].sort());
  });

  it('counts the attempts of every new type in the worker metrics', async () => {
    const counted = new Set((await webhookAttempts.get()).values.map((v) => v.labels.type));
    // Endpoints, adjustments, claims and offers are not a purchase's rewards: their own tests count them.
    const elsewhere: readonly string[] = ['endpoint_disabled', 'reward_adjusted', 'claim_resolved', 'offer_available'];
    for (const type of FACT_WEBHOOK_TYPES.filter((t) => !elsewhere.includes(t)))
      assert.ok(counted.has(type), `rewards_webhook_attempts_total{type="${type}"}`);
  });
});
