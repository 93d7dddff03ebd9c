// The Temporal connection from Temporal's standard settings: the options carry what the
// TEMPORAL_TLS_* variables name, and a real mTLS handshake works for both connections the
// service makes (the client's, in the API and worker, and the worker's native one). The test's
// Temporal dev server speaks plain gRPC, so a TLS front (node:tls, client certificates required,
// HTTP/2 by ALPN) relays to it, as a cluster's TLS listener or Temporal Cloud would ask.
import assert from 'node:assert/strict';
import { connect as netConnect } from 'node:net';
import { createServer, type Server } from 'node:tls';
import { loadConfig } from '../../core/config';
import { connectTemporal, connectWorker, temporalConnectionOptions } from '../../core/temporal-connection';
import { testTemporalAddress } from '../helpers/env';
import { hasOpenssl, makeTestPki, type TestPki } from '../helpers/tls';

describe('core/temporal-connection', () => {
  let pki: TestPki | undefined;

  before(function () {
    if (!hasOpenssl()) this.skip(); // no openssl CLI to make certificates with
    pki = makeTestPki();
  });
  after(() => pki?.remove());

  const mtlsEnv = (address: string, p: TestPki): NodeJS.ProcessEnv => ({
    TEMPORAL_ADDRESS: address,
    TEMPORAL_TLS_CLIENT_CERT_PATH: p.clientCert,
    TEMPORAL_TLS_CLIENT_KEY_PATH: p.clientKey,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: p.caCert,
    TEMPORAL_TLS_SERVER_NAME: p.serverName,
  });

  it('carries the client certificate, its key, the CA and the server name into the options', () => {
    const p = pki!;
    const config = temporalConfig({ ...mtlsEnv('temporal.example:7233', p), TEMPORAL_NAMESPACE: 'rewards-prod' });
    assert.equal(config.temporalNamespace, 'rewards-prod');
    assert.equal(config.temporalTls, true);
    const options = temporalConnectionOptions(config);
    assert.equal(options.address, 'temporal.example:7233');
    assert.ok(options.tls && typeof options.tls === 'object', 'TLS options');
    assert.equal(options.tls.serverNameOverride, p.serverName);
    assert.deepEqual(Buffer.from(options.tls.serverRootCACertificate!), p.read(p.caCert));
    assert.deepEqual(Buffer.from(options.tls.clientCertPair!.crt), p.read(p.clientCert));
    assert.deepEqual(Buffer.from(options.tls.clientCertPair!.key), p.read(p.clientKey));
    assert.equal(options.apiKey, undefined);
  });

  it('takes inline PEM (the _DATA variables) like files', () => {
    const p = pki!;
    const options = temporalConnectionOptions(
      temporalConfig({
        TEMPORAL_ADDRESS: 'temporal.example:7233',
        TEMPORAL_TLS_CLIENT_CERT_DATA: p.read(p.clientCert).toString(),
        TEMPORAL_TLS_CLIENT_KEY_DATA: p.read(p.clientKey).toString(),
      }),
    );
    assert.ok(options.tls && typeof options.tls === 'object');
    assert.deepEqual(Buffer.from(options.tls.clientCertPair!.crt), p.read(p.clientCert));
    assert.equal(options.tls.serverRootCACertificate, undefined, 'no CA: the system roots');
  });

  it('sends an API key over TLS (Temporal Cloud), and plain gRPC to the dev server', () => {
    const cloud = temporalConnectionOptions(
      temporalConfig({ TEMPORAL_ADDRESS: 'eu-west-1.aws.api.temporal.io:7233', TEMPORAL_API_KEY: 'key-1' }),
    );
    assert.equal(cloud.apiKey, 'key-1');
    assert.equal(cloud.tls, true);
    const dev = temporalConnectionOptions(temporalConfig({ TEMPORAL_ADDRESS: '127.0.0.1:7233' }));
    assert.equal(dev.tls, undefined);
    assert.equal(dev.apiKey, undefined);
  });

  describe('through a TLS front that requires a client certificate', () => {
    let front: Server;
    let address: string;
    let refusedHandshakes = 0;

    before(async function () {
      if (!pki) this.skip();
      const p = pki!;
      const [host, port] = splitAddress(testTemporalAddress());
      front = createServer(
        {
          cert: p.read(p.serverCert),
          key: p.read(p.serverKey),
          ca: p.read(p.caCert),
          requestCert: true,
          rejectUnauthorized: true,
          ALPNProtocols: ['h2'],
        },
        (socket) => {
          const upstream = netConnect(port, host);
          socket.pipe(upstream).pipe(socket);
          const close = () => {
            socket.destroy();
            upstream.destroy();
          };
          socket.on('error', close);
          upstream.on('error', close);
          socket.on('close', close);
          upstream.on('close', close);
        },
      );
      front.on('tlsClientError', () => refusedHandshakes++);
      await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
      address = `127.0.0.1:${(front.address() as { port: number }).port}`;
    });
    after(async () => {
      if (front) await new Promise((resolve) => front.close(resolve));
    });

    it('connects the client and the worker with the certificate pair', async () => {
      const config = temporalConfig(mtlsEnv(address, pki!));
      const client = await connectTemporal(config);
      try {
        const info = await client.workflowService.getSystemInfo({});
        assert.ok(info.serverVersion, 'the server answered through mTLS');
      } finally {
        await client.close();
      }
      const worker = await connectWorker(config);
      await worker.close();
    });

    it('is refused without the client certificate', async () => {
      const p = pki!;
      const before = refusedHandshakes;
      const config = temporalConfig({
        TEMPORAL_ADDRESS: address,
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: p.caCert,
        TEMPORAL_TLS_SERVER_NAME: p.serverName,
      });
      await assert.rejects(connectWorker(config));
      assert.ok(refusedHandshakes > before, 'the front refused the handshake');
    });
  });
});

/** The Temporal part of the configuration, as the processes pass it to connect. */
function temporalConfig(env: NodeJS.ProcessEnv) {
  const config = loadConfig(env);
  assert.ok(config.temporalAddress, 'an address');
  return { ...config, temporalAddress: config.temporalAddress };
}

function splitAddress(address: string): [string, number] {
  const at = address.lastIndexOf(':');
  return [address.slice(0, at), Number(address.slice(at + 1))];
}
