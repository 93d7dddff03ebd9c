// Several webhook endpoints per issuer, end to end through the real API, worker, relay,
// PostgreSQL and Temporal dev server: each event reaches exactly the endpoints that subscribe
// to its type, with one webhookId everywhere, every request verified with the standardwebhooks
// library and the endpoint's own secret; rotation, test events and recover deliver what they
// say and nothing else.
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { startStack, type Stack } from '../helpers/stack';
import { newIssuer, type TestIssuer } from '../helpers/app';
import type { CardRef } from '../helpers/events';
import { purchaseScenario } from '../helpers/scenario';
import { assertLedgerHealthy } from '../helpers/ledger';
import { startReceiver, waitFor, type Receiver } from '../helpers/webhooks';

interface Delivered {
  webhookId: string;
  type: string;
  test?: boolean;
  data: any;
}

interface TestEndpoint {
  id: string;
  secret: string;
  receiver: Receiver;
}

describe('webhook endpoints (several per issuer, end to end)', function () {
  this.timeout(300_000);
  let stack: Stack;
  let issuer: TestIssuer;
  let merchant: any;
  let card: CardRef;
  const endpoints: Record<'a' | 'b' | 'c', TestEndpoint> = {} as never;
  // Overlapping subscriptions: each type goes to exactly two of the three endpoints.
  const subscriptions = {
    a: ['qualified_auth', 'qualified_settlement'],
    b: ['qualified_settlement', 'reward_clawed_back'],
    c: ['qualified_auth', 'reward_clawed_back'],
  } as const;

  before(async () => {
    stack = await startStack();
    ({ issuer, card, merchant } = await purchaseScenario(stack.app, {
      environment: 'sandbox',
      offer: { cashbackRateBps: 500, brandedRateBps: 0 },
    }));
    for (const name of ['a', 'b', 'c'] as const) {
      const receiver = await startReceiver();
      const res = await issuer.call('POST', '/api/v2/webhook-endpoints', {
        url: receiver.url,
        enabledTypes: subscriptions[name],
        description: `endpoint ${name}`,
      });
      assert.equal(res.status, 201, res.text);
      endpoints[name] = { id: res.body.id, secret: res.body.signingSecret, receiver };
    }
  });
  after(async () => {
    await stack?.stop();
    for (const endpoint of Object.values(endpoints)) await endpoint.receiver?.close();
  });

  /** What an endpoint received, each request verified with the secrets given (any may sign). */
  function received(name: keyof typeof endpoints, secrets = [endpoints[name].secret]): Delivered[] {
    return endpoints[name].receiver.requests.map((r) => {
      const headers = r.headers as Record<string, string>;
      const verifying = secrets.filter((secret) => {
        try {
          new Webhook(secret).verify(r.body, headers);
          return true;
        } catch {
          return false;
        }
      });
      assert.ok(verifying.length > 0, `a request to ${name} verifies with its secret`);
      return JSON.parse(r.body) as Delivered;
    });
  }

  const simulate = async (outcome: string) => {
    const res = await issuer.call('POST', '/api/v2/sandbox/transactions', {
      cardId: card.cardId,
      merchantId: merchant.id,
      amount: 2000,
      outcome,
    });
    assert.equal(res.status, 201, res.text);
    return res.body;
  };

  /** Every delivery of the issuer's webhooks has ended (nothing pending, nothing in flight). */
  const settled = () =>
    waitFor('every delivery to end', async () => {
      const open = await stack.db.webhookDelivery.count({
        where: { issuerId: issuer.id, status: { in: ['pending', 'delivering'] } },
      });
      return open === 0 ? true : undefined;
    });

  const ofPurchase = (purchase: any) => (d: Delivered) =>
    d.data.authorizationId === purchase.authorizationId || d.data.transactionId === purchase.transactionId;

  it('delivers each event to exactly the endpoints subscribing to its type, with one webhookId', async () => {
    const purchase = await simulate('refunded');
    const expected = { a: 2, b: 2, c: 2 };
    await waitFor('each endpoint to receive its two', async () =>
      (['a', 'b', 'c'] as const).every((n) => received(n).filter(ofPurchase(purchase)).length >= expected[n])
        ? true
        : undefined,
    );
    await settled();
    const byType = new Map<string, Map<string, string>>();
    for (const name of ['a', 'b', 'c'] as const) {
      const got = received(name).filter(ofPurchase(purchase));
      assert.deepEqual(got.map((d) => d.type).sort(), [...subscriptions[name]].sort(), `${name} got its types only`);
      for (const d of got) byType.set(d.type, (byType.get(d.type) ?? new Map()).set(name, d.webhookId));
    }
    for (const [type, ids] of byType) {
      assert.equal(ids.size, 2, `${type} went to two endpoints`);
      assert.equal(new Set(ids.values()).size, 1, `${type} has one webhookId at every endpoint`);
    }
    const settlement = byType.get('qualified_settlement')!.get('a')!;
    const detail = await issuer.call('GET', `/api/v2/webhooks/${settlement}`);
    assert.equal(detail.status, 200, detail.text);
    assert.equal(detail.body.status, 'delivered');
    assert.deepEqual(
      detail.body.deliveries.map((d: any) => [d.endpointId, d.status, d.attempts.length]).sort(),
      [
        [endpoints.a.id, 'delivered', 1],
        [endpoints.b.id, 'delivered', 1],
      ].sort(),
    );
    await assertLedgerHealthy(stack.db);
  });

  it('signs with the rotated secret and the previous one during the overlap', async () => {
    const rotated = await issuer.call('POST', `/api/v2/webhook-endpoints/${endpoints.a.id}/rotate-secret`);
    assert.equal(rotated.status, 200, rotated.text);
    const before = endpoints.a.receiver.requests.length;
    const purchase = await simulate('settled');
    await waitFor('a to receive the purchase', async () =>
      received('a').filter(ofPurchase(purchase)).length === 2 ? true : undefined,
    );
    for (const secret of [rotated.body.signingSecret, endpoints.a.secret]) {
      const fresh = endpoints.a.receiver.requests.slice(before);
      for (const r of fresh) new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
    }
    endpoints.a.secret = rotated.body.signingSecret;
    await settled();
  });

  it('sends a test event to that endpoint only, marked test', async () => {
    const counts = (['a', 'b', 'c'] as const).map((n) => endpoints[n].receiver.requests.length);
    const res = await issuer.call('POST', `/api/v2/webhook-endpoints/${endpoints.b.id}/test`, {
      type: 'reward_expired',
    });
    assert.equal(res.status, 202, res.text);
    const [sent] = await waitFor('b to receive the test event', async () => {
      const fresh = received('b').slice(counts[1]);
      return fresh.length > 0 ? fresh : undefined;
    });
    assert.deepEqual([sent.webhookId, sent.type, sent.test], [res.body.webhookId, 'reward_expired', true]);
    await settled();
    assert.equal(endpoints.b.receiver.requests.length, counts[1] + 1, 'one test event');
    assert.deepEqual(
      [endpoints.a.receiver.requests.length, endpoints.c.receiver.requests.length],
      [counts[0], counts[2]],
      'nothing to the other endpoints',
    );
  });

  it("recovers what a disabled endpoint missed, once, with the webhooks' own ids", async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const patched = await issuer.call('PATCH', `/api/v2/webhook-endpoints/${endpoints.c.id}`, { status: 'disabled' });
    assert.equal(patched.status, 200, patched.text);
    const before = endpoints.c.receiver.requests.length;
    const purchase = await simulate('refunded');
    await waitFor('b to receive the purchase', async () =>
      received('b').filter(ofPurchase(purchase)).length === 2 ? true : undefined,
    );
    await settled();
    assert.equal(endpoints.c.receiver.requests.length, before, 'nothing sent while disabled');
    const skipped = await stack.db.webhookDelivery.findMany({
      where: { endpointId: endpoints.c.id, status: 'skipped' },
    });
    assert.equal(skipped.length, 2, 'its auth and clawback deliveries ended skipped');

    const recoverDisabled = await issuer.call('POST', `/api/v2/webhook-endpoints/${endpoints.c.id}/recover`, { since });
    assert.equal(recoverDisabled.status, 409, 'a disabled endpoint recovers nothing');
    await issuer.call('PATCH', `/api/v2/webhook-endpoints/${endpoints.c.id}`, { status: 'enabled' });
    const recovered = await issuer.call('POST', `/api/v2/webhook-endpoints/${endpoints.c.id}/recover`, { since });
    assert.equal(recovered.status, 202, recovered.text);
    assert.equal(recovered.body.count, 2);
    await waitFor('c to receive what it missed', async () =>
      endpoints.c.receiver.requests.length === before + 2 ? true : undefined,
    );
    await settled();
    const got = received('c').slice(before);
    assert.deepEqual(got.map((d) => d.webhookId).sort(), skipped.map((d) => d.webhookId).sort());
    const again = await issuer.call('POST', `/api/v2/webhook-endpoints/${endpoints.c.id}/recover`, { since });
    assert.equal(again.body.count, 0, 'delivered deliveries are not recovered again');
    assert.equal(endpoints.c.receiver.requests.length, before + 2);
  });

  it("answers 404 for another issuer's endpoint ids, like missing ones", async () => {
    const other = await newIssuer(stack.app);
    for (const [method, path, body] of [
      ['GET', '', undefined],
      ['PATCH', '', { description: 'x' }],
      ['DELETE', '', undefined],
      ['POST', '/test', { type: 'qualified_auth' }],
      ['POST', '/recover', { since: new Date(Date.now() - 60_000).toISOString() }],
      ['POST', '/rotate-secret', undefined],
    ] as const) {
      const res = await other.call(method, `/api/v2/webhook-endpoints/${endpoints.a.id}${path}`, body);
      assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
      assert.equal(res.body.reasonCode, 'webhook_endpoint_not_found');
    }
    assert.equal((await issuer.call('GET', `/api/v2/webhook-endpoints/${endpoints.a.id}`)).status, 200);
  });
});
