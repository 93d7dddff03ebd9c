import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app';

const CATALOGUE_ROUTES: Array<[string, string]> = [
  ['get', '/api/v2/chg/{chgId}/merchants'],
  ['get', '/api/v2/chg/{chgId}/merchant/{merchantId}'],
  ['get', '/api/v2/chg/{chgId}/offers'],
  ['get', '/api/v2/chg/{chgId}/offer/{offerId}'],
  ['get', '/api/v2/chg/{chgId}/merchant/{merchantId}/offers'],
  ['get', '/api/v2/chg/{chgId}/merchant/{merchantId}/offer/{offerId}'],
  ['get', '/api/v2/chg/{chgId}/merchant/{merchantId}/activation'],
  ['put', '/api/v2/chg/{chgId}/merchant/{merchantId}/activation'],
  ['delete', '/api/v2/chg/{chgId}/merchant/{merchantId}/activation'],
  ['get', '/api/v2/chg/{chgId}/merchant/{merchantId}/eligibility'],
  ['get', '/api/v2/chg/{chgId}/merchant/{merchantId}/spend-eligibility'],
  ['post', '/admin/v1/merchants'],
  ['get', '/admin/v1/merchants'],
  ['get', '/admin/v1/merchants/{merchantId}'],
  ['patch', '/admin/v1/merchants/{merchantId}'],
  ['post', '/admin/v1/merchants/{merchantId}/offers'],
  ['patch', '/admin/v1/merchants/{merchantId}/offers/{offerId}'],
];

describe('OpenAPI document (catalogue)', () => {
  let app: TestApp;
  before(async () => (app = await startTestApp()));
  after(() => app.close());

  it('lists every catalogue route with its schemas', async () => {
    const doc = (await app.request('GET', '/openapi.json')).body;
    for (const [method, path] of CATALOGUE_ROUTES) {
      const op = doc.paths[path]?.[method];
      assert.ok(op, `${method.toUpperCase()} ${path} is missing`);
      const success = Object.entries(op.responses).find(([status]) => status.startsWith('2'))![1] as any;
      assert.ok(success.content['application/json'].schema, `${method} ${path} has no response schema`);
      if (['post', 'put', 'patch'].includes(method))
        assert.ok(op.requestBody, `${method} ${path} has no request body schema`);
      assert.ok(
        op.responses['404'] || (method === 'post' && path === '/admin/v1/merchants') || path === '/admin/v1/merchants',
        `${method} ${path} documents 404`,
      );
    }
  });
});
