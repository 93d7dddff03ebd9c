import assert from 'node:assert/strict';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { startTestApp, type TestApp } from '../helpers/app';
import { declaredRoutes } from '../helpers/routes';

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
      if (body) assert.deepEqual(op.requestBody.content['application/json'].schema, JSON.parse(JSON.stringify(body)));
      for (const status of Object.keys(route.responses)) assert.ok(op.responses[status], `${route.operationId} lacks ${status}`);
      if (route.auth !== 'none') assert.ok(op.responses['401'], `${route.operationId} lacks 401`);
      for (const name of Object.keys(route.params ?? {})) {
        assert.ok(op.parameters.some((p: any) => p.name === name && p.in === 'path' && p.schema.pattern), `${route.operationId} lacks ${name}`);
      }
    }
  });

  it('documents the error object for every error status', () => {
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        for (const [status, response] of Object.entries<any>(op.responses)) {
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
        if (op.requestBody) ajv.compile(op.requestBody.content['application/json'].schema);
      }
    }
  });
});
