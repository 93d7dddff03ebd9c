import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestApp, assertError, newIssuer, type TestApp, type TestIssuer } from '../helpers/app';
import { groupBody } from '../helpers/groups';

// What /openapi.json says beyond schemas, and that the server does it: the rules the fuzz
// configuration (test/fuzz/schemathesis.toml) names as exceptions are published per operation.
describe('the reference states what the server enforces', () => {
  let app: TestApp;
  let issuer: TestIssuer;
  let doc: any;
  before(async () => {
    app = await startTestApp();
    issuer = await newIssuer(app);
    doc = (await app.request('GET', '/openapi.json')).body;
  });
  after(() => app.close());

  const operation = (path: string, method: string) => doc.paths[path][method];

  it('publishes X-Request-Id as any string, and replaces a value off the pattern instead of refusing it', async () => {
    assert.deepEqual(doc.components.parameters.RequestId.schema, { type: 'string' });
    assert.match(doc.components.parameters.RequestId.description, /replaced/);
    const echoed = await app.request('GET', '/healthz', { headers: { 'X-Request-Id': 'checkout-5c41a9' } });
    assert.equal(echoed.headers.get('x-request-id'), 'checkout-5c41a9');
    const replaced = await app.request('GET', '/healthz', { headers: { 'X-Request-Id': 'not ok,' } });
    assert.equal(replaced.status, 200);
    assert.match(replaced.headers.get('x-request-id') ?? '', /^req_[0-9a-f-]{36}$/);
  });

  it('answers a card externalId repeated in a group with 400 duplicate_external_id, as documented', async () => {
    const body = groupBody();
    const card = body.cardholders[0].cards[0];
    body.cardholders.push({
      externalId: `${body.cardholders[0].externalId}-2`,
      status: 'active',
      cards: [{ ...card }],
    });
    const res = await issuer.call('POST', '/api/v2/chg', body);
    assertError(res, 400, 'duplicate_external_id');
    assert.equal(res.body.details.errors[0].path, '/cardholders/1/cards/0/externalId');
    assert.match(operation('/api/v2/chg', 'post').responses['400'].description, /duplicate_external_id/);
  });

  it('publishes bulk-upsert items as GroupInput, externalId and cardholders required', () => {
    const items = operation('/api/v2/chg/bulk-upsert', 'post').requestBody.content['application/json'].schema;
    const bulk = doc.components.schemas[items.$ref.split('/').pop()];
    assert.equal(bulk.properties.items.items.$ref, '#/components/schemas/GroupInput');
    assert.deepEqual(doc.components.schemas.GroupInput.required, ['externalId', 'cardholders']);
  });

  it('publishes the webhook url as format uri and refuses what RFC 3986 does not allow with invalid_webhook_url', async () => {
    assert.equal(doc.components.schemas.WebhookEndpointInput.properties.url.format, 'uri');
    const res = await issuer.call('PUT', '/api/v2/webhook-endpoint', { url: 'https://hooks.example.com/{id}' });
    assertError(res, 400, 'invalid_webhook_url');
  });

  it('states on every paginated list that a cursor it never issued is 400 invalid_query', () => {
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        if (!op.parameters?.some((p: any) => p.name === 'cursor')) continue;
        assert.match(op.description ?? '', /nextCursor/, `${method} ${path}`);
        assert.match(op.responses['400'].description ?? '', /invalid_query/, `${method} ${path}`);
      }
    }
  });

  it('names every paginated list in the fuzz configuration, where a cursor it never issued is expected', () => {
    const config = readFileSync(join(__dirname, '..', 'fuzz', 'schemathesis.toml'), 'utf8');
    const block = /# A cursor is opaque[^\n]*\n\[\[operations\]\]\ninclude-operation-id = \[([^\]]*)\]/.exec(config);
    assert.ok(block, 'the cursor block of schemathesis.toml');
    const named = new Set([...block[1].matchAll(/"(\w+)"/g)].map((m) => m[1]));
    const paginated = Object.values<any>(doc.paths)
      .flatMap((ops) => Object.values<any>(ops))
      .filter((op) => op.parameters?.some((p: any) => p.name === 'cursor'))
      .map((op) => op.operationId as string);
    assert.deepEqual(
      paginated.filter((id) => !named.has(id)),
      [],
    );
  });

  it('links a created group to its reads and a listed webhook to its replay', () => {
    const created = operation('/api/v2/chg', 'post').responses['201'].links;
    assert.deepEqual(created.listMerchants, {
      operationId: 'listMerchants',
      parameters: { chgId: '$response.body#/id' },
    });
    const listed = operation('/api/v2/webhooks', 'get').responses['200'].links;
    assert.equal(listed.replayWebhook.parameters.webhookId, '$response.body#/data/0/webhookId');
    const operationIds = new Set(
      Object.values<any>(doc.paths).flatMap((ops) => Object.values<any>(ops).map((op) => op.operationId)),
    );
    for (const ops of Object.values<any>(doc.paths)) {
      for (const op of Object.values<any>(ops)) {
        for (const response of Object.values<any>(op.responses)) {
          for (const link of Object.values<any>(response.links ?? {})) assert.ok(operationIds.has(link.operationId));
        }
      }
    }
  });
});
