import assert from 'node:assert/strict';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { startTestApp, type TestApp } from '../helpers/app';
import { declaredRoutes } from '../helpers/routes';
import { WEBHOOK_TYPES, webhookBodySchema } from '../../core/webhooks/payloads';
import { buildOpenApi } from '../../api/openapi';
import { inlineRefs } from '../helpers/openapi-refs';

describe('GET /openapi.json', () => {
  let app: TestApp;
  let doc: any;
  before(async () => {
    app = await startTestApp();
    doc = (await app.request('GET', '/openapi.json')).body;
  });
  after(() => app.close());

  it('is an OpenAPI 3.1 document with both security schemes', () => {
    assert.equal(doc.openapi, '3.1.0');
    assert.ok(doc.components.securitySchemes.IssuerApiToken);
    assert.ok(doc.components.securitySchemes.OperatorToken);
  });

  it('lists every declared route with the very schemas that validate it', () => {
    for (const route of declaredRoutes()) {
      const op = doc.paths[route.path]?.[route.method];
      assert.ok(op, `${route.method} ${route.path} missing`);
      assert.equal(op.operationId, route.operationId);
      const body = route.body ?? route.documentedBody;
      if (body)
        assert.deepEqual(
          inlineRefs(doc, op.requestBody.content['application/json'].schema),
          JSON.parse(JSON.stringify(body)),
        );
      for (const [status, response] of Object.entries(route.responses)) {
        const declared = inlineRefs(doc, JSON.parse(JSON.stringify(response.schema ?? null)));
        if (response.schema)
          assert.deepEqual(inlineRefs(doc, op.responses[status].content['application/json'].schema), declared);
      }
      for (const status of Object.keys(route.responses))
        assert.ok(op.responses[status], `${route.operationId} lacks ${status}`);
      if (route.auth !== 'none') assert.ok(op.responses['401'], `${route.operationId} lacks 401`);
      for (const name of Object.keys(route.params ?? {})) {
        assert.ok(
          op.parameters.some((p: any) => p.name === name && p.in === 'path' && p.schema.pattern),
          `${route.operationId} lacks ${name}`,
        );
      }
    }
  });

  it('documents the error object for every error status', () => {
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        for (const [status, ref] of Object.entries<any>(op.responses)) {
          const response = ref.$ref ? doc.components.responses[ref.$ref.split('/').pop()] : ref;
          assert.ok(response, `${method} ${path} ${status}: ${ref.$ref}`);
          if (Number(status) >= 400 && response.content) {
            assert.ok(response.content['application/json'].schema, `${method} ${path} ${status}`);
          }
        }
      }
    }
  });

  it('holds schemas that a JSON Schema 2020-12 validator compiles', () => {
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    for (const ops of Object.values<any>(doc.paths)) {
      for (const op of Object.values<any>(ops)) {
        if (op.requestBody) ajv.compile(inlineRefs(doc, op.requestBody.content['application/json'].schema));
      }
    }
  });

  it('publishes the webhook contract: a webhooks entry per type with its body, signature headers and retry schedule', () => {
    assert.deepEqual(Object.keys(doc.webhooks).sort(), [
      'authorization_lapsed',
      'cashback_paid_out',
      'chg_erased',
      'claim_resolved',
      'endpoint_disabled',
      'offer_available',
      'payout_completed',
      'qualified_auth',
      'qualified_settlement',
      'reward_adjusted',
      'reward_available',
      'reward_clawed_back',
      'reward_expired',
      'reward_expiring',
    ]);
    for (const type of WEBHOOK_TYPES) {
      const post = doc.webhooks[type].post;
      const ref = post.requestBody.content['application/json'].schema.$ref as string;
      const schema = doc.components.schemas[ref.replace('#/components/schemas/', '')];
      assert.deepEqual(
        schema,
        JSON.parse(JSON.stringify(webhookBodySchema(type))),
        'the schema the delivery tests validate with',
      );
      assert.equal(schema.properties.type.const, type);
      assert.deepEqual(
        post.parameters.map((p: any) => [p.name, p.in, p.required]),
        [
          ['webhook-id', 'header', true],
          ['webhook-timestamp', 'header', true],
          ['webhook-signature', 'header', true],
        ],
      );
      assert.match(post.description, /after 30s, 2m, 10m, 30m, 1h, 3h, 6h, 12h, 1d, 1d \(11 attempts\)/);
      new Ajv2020({ strict: false }).addFormat('date-time', true).compile(schema);
    }
    const configured = buildOpenApi([], 'test', { webhookRetryScheduleMs: [3_600_000, 21_600_000] }) as any;
    assert.match(
      configured.webhooks.qualified_auth.post.description,
      /after 1h, 6h \(3 attempts\)/,
      'the deployment’s own schedule',
    );
    // Both types name the amounts as reward-detail does, and data does not repeat the webhookId.
    const auth = doc.components.schemas.QualifiedAuthWebhook.properties.data;
    const settlement = doc.components.schemas.QualifiedSettlementWebhook.properties.data;
    for (const data of [auth, settlement]) {
      for (const field of ['earnedAmountMinor', 'spentAmountMinor', 'cashbackAmountMinor', 'brandedAmountMinor'])
        assert.ok(data.required.includes(field), field);
      assert.equal(data.properties.webhookId, undefined);
      assert.equal(data.properties.spentMinor, undefined);
    }
  });
});
