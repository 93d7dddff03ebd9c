// Webhook destinations: which addresses, names and ports a webhook may go
// to, in every spelling; the guard that resolves and judges every answer; and the sender that
// connects only to what the guard checked, so DNS rebinding cannot point it inside.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import {
  classifyAddress,
  FETCH_BAD_PORTS,
  urlDestinationRefusal,
  type AddressClass,
} from '../../../core/webhooks/destination';
import {
  createWebhookDestinations,
  pinnedLookup,
  systemResolver,
  type ResolvedAddress,
  type Resolver,
} from '../../../core/webhooks/destination-guard';
import { webhookUrlProblems } from '../../../core/webhooks/endpoint-url';
import { sendWebhook } from '../../../activities/webhooks/send';
import { INTERNAL_HOSTS } from '../../helpers/webhooks';

/** A resolver answering from a table, counting its calls; unknown names fail as DNS does. */
function tableResolver(table: Record<string, string[] | string[][]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
    calls.push(hostname);
    const entry = table[hostname];
    if (!entry) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    // A list of lists answers the n-th call with the n-th list (the last one after that).
    const nth = Array.isArray(entry[0])
      ? (entry as string[][])[Math.min(calls.filter((c) => c === hostname).length, entry.length) - 1]
      : (entry as string[]);
    return nth.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolve, { calls });
}

describe('core/webhooks/destination', () => {
  it('classifies addresses, IPv4 forms inside IPv6 by the IPv4 address they carry', () => {
    const table: Array<[string, AddressClass | null]> = [
      ['8.8.8.8', 'public'],
      ['93.184.215.14', 'public'],
      ['2606:4700:4700::1111', 'public'],
      ['::ffff:8.8.8.8', 'public'],
      ['64:ff9b::808:808', 'public'],
      ['2002:808:808::1', 'public'],
      ['127.0.0.1', 'loopback'],
      ['127.255.0.9', 'loopback'],
      ['::1', 'loopback'],
      ['[::1]', 'loopback'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['::ffff:7f00:1', 'loopback'],
      ['::7f00:1', 'loopback'],
      ['64:ff9b::7f00:1', 'loopback'],
      ['2002:7f00:1::', 'loopback'],
      ['10.1.2.3', 'private'],
      ['172.16.0.1', 'private'],
      ['172.31.255.255', 'private'],
      ['192.168.0.1', 'private'],
      ['::ffff:10.0.0.1', 'private'],
      ['172.32.0.1', 'public'],
      ['100.64.0.1', 'shared'],
      ['100.127.255.255', 'shared'],
      ['100.128.0.1', 'public'],
      ['169.254.169.254', 'link_local'],
      ['fe80::1', 'link_local'],
      ['fe80::1%eth0', 'link_local'],
      ['febf::1', 'link_local'],
      ['fc00::1', 'unique_local'],
      ['fd12:3456::1', 'unique_local'],
      ['0.0.0.0', 'unspecified'],
      ['0.1.2.3', 'unspecified'],
      ['::', 'unspecified'],
      ['::ffff:0.0.0.0', 'unspecified'],
      ['224.0.0.1', 'multicast'],
      ['239.255.255.250', 'multicast'],
      ['ff02::1', 'multicast'],
      ['255.255.255.255', 'broadcast'],
      ['240.0.0.1', 'reserved'],
      ['192.0.0.8', 'reserved'],
      ['198.18.0.1', 'reserved'],
      ['::8.8.8.8', 'reserved'],
      ['2001::1', 'reserved'],
      ['64:ff9b:1::a00:1', 'reserved'],
      ['fec0::1', 'reserved'],
      ['hooks.example.com', null],
      ['127.1', null],
      ['', null],
    ];
    for (const [address, expected] of table) assert.equal(classifyAddress(address), expected, address);
  });

  it('refuses every spelling of an internal host, over http and https, and allows public ones', () => {
    for (const host of INTERNAL_HOSTS) {
      for (const scheme of ['http', 'https']) {
        const url = new URL(`${scheme}://${host}/hooks`);
        assert.ok(
          urlDestinationRefusal(url, false),
          `${scheme}://${host} (parsed host ${url.hostname}) must be refused`,
        );
      }
    }
    for (const url of [
      'https://hooks.example.com/x',
      'http://8.8.8.8:8080/x',
      'https://[2606:4700::1111]:8443/x',
      'https://a.b.example.co.uk./x',
    ]) {
      assert.equal(urlDestinationRefusal(new URL(url), false), null, url);
    }
  });

  it('lets the allow setting open loopback and private destinations only, never link-local, unspecified, multicast or bad ports', () => {
    for (const host of [
      '127.0.0.1',
      'localhost',
      '[::1]',
      '10.0.0.1',
      '192.168.1.1',
      '100.64.0.1',
      '[fd00::1]',
      'receiver',
      'hooks.internal',
    ]) {
      assert.equal(urlDestinationRefusal(new URL(`http://${host}:4000/`), true), null, host);
    }
    for (const host of [
      '169.254.169.254',
      '[fe80::1]',
      '0.0.0.0',
      '[::]',
      '224.0.0.1',
      '255.255.255.255',
      '[::ffff:169.254.169.254]',
    ]) {
      assert.match(
        urlDestinationRefusal(new URL(`http://${host}:4000/`), true) ?? '',
        /link-local|unspecified|multicast|broadcast/,
        host,
      );
    }
    assert.match(urlDestinationRefusal(new URL('http://127.0.0.1:6000/'), true) ?? '', /port 6000/);
  });

  it("refuses fetch's bad ports and port 0, and allows the ports receivers use", () => {
    for (const port of [25, 4190, 6000, 6667, 10080, 0]) {
      assert.match(
        urlDestinationRefusal(new URL(`https://hooks.example.com:${port}/`), false) ?? '',
        new RegExp(`port ${port}`),
        String(port),
      );
    }
    for (const port of [80, 443, 3000, 4000, 8080, 8443, 9000]) {
      assert.equal(urlDestinationRefusal(new URL(`https://hooks.example.com:${port}/`), false), null, String(port));
    }
  });

  it("holds exactly the ports Node's fetch refuses (checked against fetch itself, without connecting)", async () => {
    for (const port of FETCH_BAD_PORTS) {
      const err: any = await fetch(`http://127.0.0.1:${port}/`).then(
        () => undefined,
        (e) => e,
      );
      assert.match(String(err?.cause?.message ?? err), /bad port/, `fetch refuses port ${port}`);
    }
  });

  it('refuses URLs with CR, LF, other control characters or spaces, with credentials, or without a host', () => {
    const refused: Array<[string, RegExp]> = [
      ['https://hooks.example.com/x\r\nX-Injected: 1', /control/],
      ['https://hooks.example.com/x\n', /control/],
      ['https://hooks.example.com/\tx', /control/],
      ['https://hooks.example.com/\u0000x', /control/],
      ['https://hooks.example.com/\u007fx', /control/],
      ['https://hooks.\u0000example.com/', /absolute/],
      [' https://hooks.example.com/', /control/],
      ['https://hooks.example.com/a b', /control/],
      ['https://user:pw@hooks.example.com/', /credentials/],
      ['https://user@hooks.example.com/', /credentials/],
      ['http://', /absolute/],
      ['file:///etc/passwd', /https/],
    ];
    for (const [url, why] of refused) {
      const problems = webhookUrlProblems(url, 'sandbox');
      assert.equal(problems.length, 1, JSON.stringify(url));
      assert.match(problems[0].message, why, JSON.stringify(url));
    }
    assert.deepEqual(webhookUrlProblems('https://hooks.example.com/a%20b?x=1', 'production'), []);
  });
});

describe('core/webhooks/destination-guard', () => {
  it('judges every address a name resolves to, and names no address it learnt from DNS', async () => {
    const resolve = tableResolver({
      'public.example.com': ['8.8.8.8', '2606:4700::1111'],
      'internal.example.com': ['10.1.2.3'],
      'mixed.example.com': ['8.8.8.8', '127.0.0.1'],
      'meta.example.com': ['169.254.169.254'],
      'mapped.example.com': ['::ffff:7f00:1'],
    });
    const guard = createWebhookDestinations({ allowPrivate: false, resolve });
    const allowed = await guard.check('https://public.example.com/hooks');
    assert.equal(allowed.kind, 'allowed');
    assert.deepEqual(allowed.kind === 'allowed' && allowed.addresses, [
      { address: '8.8.8.8', family: 4 },
      { address: '2606:4700::1111', family: 6 },
    ]);
    for (const [host, why] of [
      ['internal', /private/],
      ['mixed', /loopback/],
      ['meta', /link-local/],
      ['mapped', /loopback/],
    ] as const) {
      const verdict = await guard.check(`https://${host}.example.com/hooks`);
      assert.equal(verdict.kind, 'refused', host);
      assert.match(verdict.kind === 'refused' ? verdict.reason : '', why, host);
      assert.doesNotMatch(
        verdict.kind === 'refused' ? verdict.reason : '',
        /10\.1\.2\.3|127\.0\.0\.1|169\.254\.169\.254|7f00/,
        'the resolved address stays ours',
      );
    }
    assert.deepEqual(await guard.check('https://missing.example.com/'), { kind: 'unresolved', code: 'ENOTFOUND' });
    // Literals and local names are judged without asking DNS.
    const before = resolve.calls.length;
    assert.equal((await guard.check('http://2130706433:8080/')).kind, 'refused');
    assert.equal((await guard.check('http://metadata.google.internal/')).kind, 'refused');
    assert.equal(resolve.calls.length, before);
  });

  it('with the allow setting, lets names resolve to loopback and private addresses but not to link-local ones', async () => {
    const resolve = tableResolver({
      'dev.example.com': ['127.0.0.1', '10.0.0.5'],
      'meta.example.com': ['169.254.169.254'],
    });
    const guard = createWebhookDestinations({ allowPrivate: true, resolve });
    assert.equal((await guard.check('http://dev.example.com:4000/')).kind, 'allowed');
    assert.equal((await guard.check('http://meta.example.com/')).kind, 'refused');
  });

  it('stops waiting for a resolver that does not answer when the signal aborts', async () => {
    const guard = createWebhookDestinations({ allowPrivate: false, resolve: () => new Promise(() => undefined) });
    assert.deepEqual(await guard.check('https://slow.example.com/', AbortSignal.timeout(50)), {
      kind: 'unresolved',
      code: 'ETIMEOUT',
    });
  });

  it("uses the operating system's resolver by default (localhost answers loopback)", async () => {
    const answers = await systemResolver('localhost');
    assert.ok(
      answers.length > 0 && answers.every((a) => classifyAddress(a.address) === 'loopback'),
      JSON.stringify(answers),
    );
    assert.equal(
      (await createWebhookDestinations({ allowPrivate: false }).check('http://localhost:8080/')).kind,
      'refused',
    );
  });

  it('pins lookups to the checked addresses whatever is asked, honouring the family', () => {
    const lookup = pinnedLookup([
      { address: '8.8.8.8', family: 4 },
      { address: '2606:4700::1111', family: 6 },
    ]);
    const ask = (options: object) =>
      new Promise<unknown[]>((resolve) =>
        lookup('rebind.example.com', options, (err, address, family) => resolve([err?.code ?? null, address, family])),
      );
    return Promise.all([
      ask({}).then((r) => assert.deepEqual(r, [null, '8.8.8.8', 4])),
      ask({ family: 6 }).then((r) => assert.deepEqual(r, [null, '2606:4700::1111', 6])),
      ask({ all: true }).then((r) =>
        assert.deepEqual(r[1], [
          { address: '8.8.8.8', family: 4 },
          { address: '2606:4700::1111', family: 6 },
        ]),
      ),
      new Promise<unknown[]>((resolve) =>
        pinnedLookup([{ address: '8.8.8.8', family: 4 }])('x', { family: 6 }, (err) => resolve([err?.code])),
      ).then((r) => assert.deepEqual(r, ['ENOTFOUND'])),
    ]);
  });
});

describe('activities/webhooks/send: the destination is checked, then connected to', () => {
  const servers: Server[] = [];
  after(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));

  /** A server on `host` (port 0: any) that counts the requests it receives. */
  async function listen(host: string, port = 0): Promise<{ port: number; hits: string[] }> {
    const hits: string[] = [];
    const server = createServer((req, res) => {
      hits.push(`${req.method} ${req.headers.host} ${req.url}`);
      req.resume();
      res.statusCode = 204;
      res.end();
    });
    servers.push(server);
    server.listen(port, host);
    await new Promise((resolve, reject) => server.once('listening', resolve).once('error', reject));
    return { port: (server.address() as AddressInfo).port, hits };
  }

  it('connects to the address the check resolved, even when the next answer differs (DNS rebinding)', async () => {
    const checked = await listen('127.0.0.2');
    const other = await listen('127.0.0.1', checked.port).catch(() => undefined);
    assert.ok(other, 'a second loopback server on the same port');
    const resolve = tableResolver({ 'rebind.example.com': [['127.0.0.2'], ['127.0.0.1']] });
    const guard = createWebhookDestinations({ allowPrivate: true, resolve });
    const sent = await sendWebhook(
      guard,
      `http://rebind.example.com:${checked.port}/hooks?x=1`,
      { 'webhook-id': 'evt_x' },
      '{}',
      2_000,
    );
    assert.deepEqual([sent.ok, sent.statusCode], [true, 204], String(sent.error));
    assert.deepEqual(
      checked.hits,
      [`POST rebind.example.com:${checked.port} /hooks?x=1`],
      'the Host header keeps the name',
    );
    assert.deepEqual(other.hits, []);
    assert.deepEqual(resolve.calls, ['rebind.example.com'], 'resolved once, for the check');
  });

  it('never reaches a private address a name turns to after answering a public one', async () => {
    const inside = await listen('127.0.0.1');
    const resolve = tableResolver({ 'rebind.example.com': [['192.0.2.10'], ['127.0.0.1']] });
    const guard = createWebhookDestinations({ allowPrivate: false, resolve });
    const sent = await sendWebhook(guard, `http://rebind.example.com:${inside.port}/hooks`, {}, '{}', 300);
    assert.equal(sent.ok, false);
    assert.deepEqual(inside.hits, []);
    assert.deepEqual(resolve.calls, ['rebind.example.com']);
  });

  it('makes no connection to a refused destination and says so without probing', async () => {
    const inside = await listen('127.0.0.1');
    const guard = createWebhookDestinations({
      allowPrivate: false,
      resolve: tableResolver({ 'inside.example.com': ['127.0.0.1'] }),
    });
    for (const url of [
      `http://127.0.0.1:${inside.port}/`,
      `http://2130706433:${inside.port}/`,
      `http://[::ffff:127.0.0.1]:${inside.port}/`,
      `http://inside.example.com:${inside.port}/`,
      `http://localhost:${inside.port}/`,
    ]) {
      const sent = await sendWebhook(guard, url, {}, '{}');
      assert.deepEqual([sent.ok, sent.statusCode], [false, null], url);
      assert.match(sent.error ?? '', /^destination_refused: .*loopback.*; nothing was sent$/, url);
    }
    assert.deepEqual(inside.hits, []);
  });

  it('keeps TLS about the host name: SNI names it and the certificate is verified for it', async () => {
    const fixture = (name: string) => readFileSync(join(__dirname, 'fixtures', name));
    const seen: string[] = [];
    // A certificate for hooks.example.com that no CA signed (a test fixture; its key guards
    // nothing): the sender must refuse it.
    const server = createTlsServer(
      {
        key: fixture('self-signed.key.pem'),
        cert: fixture('self-signed.cert.pem'),
        SNICallback: (name, done) => {
          seen.push(`sni ${name}`);
          done(null, undefined);
        },
      },
      (req, res) => {
        seen.push(`request ${req.headers.host}`);
        res.end();
      },
    );
    servers.push(server as unknown as Server);
    server.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const port = (server.address() as AddressInfo).port;
    const guard = createWebhookDestinations({
      allowPrivate: true,
      resolve: tableResolver({ 'hooks.example.com': ['127.0.0.1'] }),
    });
    const sent = await sendWebhook(guard, `https://hooks.example.com:${port}/hooks`, {}, '{}', 2_000);
    assert.equal(sent.ok, false);
    assert.match(sent.error ?? '', /^connection_error: .*SELF_SIGNED/);
    assert.deepEqual(
      seen,
      ['sni hooks.example.com'],
      'SNI is the name, and nothing is sent over an unverified connection',
    );
  });

  it('still delivers to local receivers when the allow setting is on', async () => {
    const local = await listen('127.0.0.1');
    const guard = createWebhookDestinations({ allowPrivate: true });
    for (const url of [`http://127.0.0.1:${local.port}/a`, `http://localhost:${local.port}/b`]) {
      const sent = await sendWebhook(guard, url, {}, '{"é":1}');
      assert.equal(sent.ok, true, `${url}: ${sent.error}`);
    }
    assert.equal(local.hits.length, 2);
  });
});
