// The reference receiver of examples/webhook-receiver, fed with bodies and headers signed
// by the service's own signing code.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReceiverApp } from '../../examples/webhook-receiver/app';
import { WebhookStore } from '../../examples/webhook-receiver/store';
import { buildEnvelope } from '../../core/webhooks/envelope';
import { generateSigningSecret, signatureHeaders } from '../../core/webhooks/signing';

describe('examples/webhook-receiver', () => {
  const secret = generateSigningSecret();
  const store = new WebhookStore();
  let processed = 0;
  let server: Server;
  let url: string;

  before(async () => {
    server = createReceiverApp({ secret, store, process: async () => void processed++ }).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  after(() => new Promise((resolve) => server.close(resolve)));

  const webhook = {
    id: 'evt_4f0c1a6e-6a51-4bd8-9a36-1c2b3d4e5f60',
    type: 'qualified_settlement',
    createdAt: new Date('2026-11-22T10:00:00Z'),
    data: {
      chgId: 'chg_1',
      transactionId: 'txn_1',
      authorizationId: 'auth_1',
      externalId: 'ext-1',
      merchantId: 'mp_1',
      rewardEventIds: ['brevt_1'],
      rewardGrantIds: ['rg_1'],
      earnedAmountMinor: 700,
    },
  };
  const post = (body: string, headers: object) =>
    fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  const signed = (at = new Date()) => {
    const body = buildEnvelope(webhook);
    return {
      body,
      headers: signatureHeaders({ secret, previousSecret: null, previousSecretExpiresAt: null }, webhook.id, body, at),
    };
  };

  it('accepts a validly signed webhook with 2xx and stores the recommended fields', async () => {
    const { body, headers } = signed();
    const res = await post(body, headers);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { webhookId: webhook.id, duplicate: false });
    const row = store.get(webhook.id)!;
    assert.deepEqual(
      { ...row, receivedAt: typeof row.receivedAt },
      {
        webhookId: webhook.id,
        type: 'qualified_settlement',
        receivedAt: 'string',
        signatureVerified: true,
        processingStatus: 'processed',
        sourceIds: {
          chgId: 'chg_1',
          authorizationId: 'auth_1',
          transactionId: 'txn_1',
          externalId: 'ext-1',
          merchantId: 'mp_1',
          rewardEventIds: ['brevt_1'],
          rewardGrantIds: ['rg_1'],
        },
      },
    );
    assert.equal(processed, 1);
  });

  it('answers 2xx to a replay of a processed webhook without processing it again', async () => {
    const { body, headers } = signed();
    const res = await post(body, headers);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { webhookId: webhook.id, duplicate: true });
    assert.equal(processed, 1);
  });

  it('rejects a bad signature, a tampered body and a stale timestamp with 4xx', async () => {
    const { body, headers } = signed();
    const other = signatureHeaders(
      { secret: generateSigningSecret(), previousSecret: null, previousSecretExpiresAt: null },
      webhook.id,
      body,
      new Date(),
    );
    assert.equal((await post(body, other)).status, 401);
    assert.equal((await post(body.replace('700', '7000'), headers)).status, 401);
    const stale = signed(new Date(Date.now() - 6 * 60 * 1000));
    assert.equal((await post(stale.body, stale.headers)).status, 401);
    assert.equal((await post(body, {})).status, 401);
    assert.equal(processed, 1);
  });
});
