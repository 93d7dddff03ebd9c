import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { startTestApp, assertError, newIssuer, type TestApp, type TestIssuer } from '../helpers/app';

/**
 * Through node:http, past the test client's contract check: fetch refuses TRACE, and the check
 * reads GET /api/v2/chg/bulk-upsert as the group read it is not.
 */
function rawRequest(
  url: string,
  method: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; allow?: string; body: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, allow: res.headers.allow, body: text ? JSON.parse(text) : undefined }),
      );
    });
    req.once('error', reject);
    req.end();
  });
}

describe('methods a path does not take (api/middleware/method-not-allowed.ts)', () => {
  let app: TestApp;
  let issuer: TestIssuer;
  before(async () => {
    app = await startTestApp();
    issuer = await newIssuer(app);
  });
  after(() => app.close());

  it('answers 405 method_not_allowed with Allow listing the methods the path takes', async () => {
    const res = await issuer.call('PUT', '/api/v2/chg');
    assertError(res, 405, 'method_not_allowed');
    assert.equal(res.headers.get('allow'), 'POST');
    const group = await issuer.call('POST', '/api/v2/chg/chg_00000000-0000-4000-8000-000000000000');
    assertError(group, 405, 'method_not_allowed');
    assert.deepEqual(group.headers.get('allow')?.split(', ').sort(), ['DELETE', 'GET', 'HEAD']);
  });

  it('answers a method the router does not know (TRACE) with 405 and Allow too', async () => {
    const res = await rawRequest(`${app.url}/api/v2/sandbox/clock`, 'TRACE');
    assert.equal(res.status, 405);
    assert.equal(res.body.reasonCode, 'method_not_allowed');
    assert.deepEqual(res.allow?.split(', ').sort(), ['GET', 'HEAD']);
  });

  it('answers OPTIONS with 204 and Allow', async () => {
    const res = await app.request('OPTIONS', '/api/v2/webhook-endpoint');
    assert.equal(res.status, 204);
    assert.deepEqual(res.headers.get('allow')?.split(', ').sort(), ['GET', 'HEAD', 'PUT']);
    const group = await app.request('OPTIONS', '/api/v2/chg/chg_00000000-0000-4000-8000-000000000000');
    assert.equal(group.status, 204);
    assert.deepEqual(group.headers.get('allow')?.split(', ').sort(), ['DELETE', 'GET', 'HEAD']);
  });

  it('takes a literal path as the resource where a parameterised one matches too', async () => {
    const res = await rawRequest(`${app.url}/api/v2/chg/bulk-upsert`, 'GET', {
      authorization: `Bearer ${issuer.token}`,
    });
    assert.equal(res.status, 405);
    assert.equal(res.body.reasonCode, 'method_not_allowed');
    assert.equal(res.allow, 'POST');
  });

  it('still answers 404 for a path no route takes', async () => {
    assertError(await issuer.call('PUT', '/api/v2/nothing-here'), 404, 'route_not_found');
  });
});
