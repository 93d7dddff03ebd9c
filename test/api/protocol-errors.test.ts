// What the server answers below the routes: requests Node's parser refuses, the auth scheme's
// spelling, and the metrics token. Raw sockets, because fetch would not send these requests.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { startTestApp, newIssuer, assertError, type TestApp, type TestResponse } from '../helpers/app';
import { answerClientErrors } from '../../api/client-errors';

/** Sends raw bytes and returns the whole answer once the server closes the connection. */
function rawExchange(
  url: string,
  request: string,
  options: { keepOpen?: boolean } = {},
): Promise<{ status: number; body: any }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(request);
      if (!options.keepOpen) socket.end();
    });
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]),
        body: rest.length ? JSON.parse(rest.join('\r\n\r\n')) : undefined,
      });
    });
  });
}

const asResponse = (r: { status: number; body: any }): TestResponse => ({
  status: r.status,
  body: r.body,
  text: JSON.stringify(r.body),
  headers: new Headers(),
});

describe('protocol-level errors, the bearer scheme and the metrics token', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ config: { metricsToken: 'm'.repeat(40) } });
  });
  after(() => app.close());

  it('answers headers too large with 431 and the error object', async () => {
    const res = await rawExchange(app.url, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    assertError(asResponse(res), 431, 'headers_too_large');
  });

  it('answers Content-Length together with Transfer-Encoding with 400 and the error object', async () => {
    const res = await rawExchange(
      app.url,
      'POST /api/v1/incoming-txn HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    );
    assertError(asResponse(res), 400, 'malformed_request');
  });

  it('answers a request that never finishes arriving with 408 and the error object', async () => {
    const server = answerClientErrors(
      createServer({ requestTimeout: 300, headersTimeout: 300, connectionsCheckingInterval: 50 }, (_req, res) =>
        res.end(),
      ),
    );
    server.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const res = await rawExchange(url, 'GET / HTTP/1.1\r\nHost: x\r\n', { keepOpen: true });
      assertError(asResponse(res), 408, 'request_timeout');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('takes the bearer scheme in any case (RFC 7235), the token itself exactly', async () => {
    const issuer = await newIssuer(app);
    for (const scheme of ['bearer', 'BEARER', 'Bearer']) {
      const res = await app.request('GET', '/api/v2/webhooks', {
        headers: { authorization: `${scheme} ${issuer.token}` },
      });
      assert.equal(res.status, 200, `${scheme}: ${res.text}`);
    }
    assertError(
      await app.request('GET', '/api/v2/webhooks', {
        headers: { authorization: `Bearer ${issuer.token.toUpperCase()}` },
      }),
      401,
      'invalid_token',
    );
  });

  it('serves /metrics only for the metrics token when one is set', async () => {
    assertError(await app.request('GET', '/metrics'), 401, 'missing_token');
    assertError(await app.request('GET', '/metrics', { token: 'x'.repeat(40) }), 401, 'invalid_token');
    const ok = await app.request('GET', '/metrics', { token: 'm'.repeat(40) });
    assert.equal(ok.status, 200);
    assert.match(ok.text, /# TYPE/);
  });

  it('documents both shapes of an ingestion 400: the failures and the error object', async () => {
    const doc = (await app.request('GET', '/openapi.json')).body;
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    ajv.addSchema({ ...doc, $id: 'openapi' });
    const validate = ajv.compile({
      $ref: 'openapi#/paths/~1api~1v1~1incoming-txn/post/responses/400/content/application~1json/schema',
    });
    const issuer = await newIssuer(app);
    const noBody = await app.request('POST', '/api/v1/incoming-txn', { token: issuer.token });
    assert.equal(noBody.status, 400);
    assert.ok(validate(noBody.body), JSON.stringify(validate.errors));
    const allFailed = await issuer.call('POST', '/api/v1/incoming-txn', [{ id: 'x' }]);
    assert.equal(allFailed.status, 400);
    assert.ok(validate(allFailed.body), JSON.stringify(validate.errors));
  });
});
