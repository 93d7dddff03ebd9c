import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { LeanConnection } from '../../bench/lean-http';
import { closedLoop } from '../../bench/load';

/** A local server whose answer to each path the test decides; it counts the connections it accepted. */
async function server(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const s = http.createServer(answer);
  let connections = 0;
  s.on('connection', () => connections++);
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  return {
    port,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => s.close(() => resolve())).then(() => s.closeAllConnections()),
  };
}

describe('the bench lean HTTP client', () => {
  it('reads sized answers one after another on one kept-alive connection, whatever their size', async () => {
    const sizes = [0, 1, 70_000, 17, 1_000_000];
    const seen: string[] = [];
    const srv = await server((req, res) => {
      seen.push(`${req.url} ${req.headers.authorization}`);
      res.statusCode = req.url === '/missing' ? 404 : 200;
      res.end(Buffer.alloc(sizes[Number(req.url!.slice(1))] ?? 3, 'x'));
    });
    const c = new LeanConnection('127.0.0.1', srv.port);
    try {
      for (let i = 0; i < sizes.length; i++) assert.equal(await c.get(`/${i}`, { authorization: 'Bearer t' }), 200);
      assert.equal(await c.get('/missing'), 404);
      assert.equal(await c.get('/0'), 200);
      assert.equal(srv.connections(), 1);
      assert.deepEqual(seen.slice(0, 2), ['/0 Bearer t', '/1 Bearer t']);
    } finally {
      c.close();
      await srv.close();
    }
  });

  it('reads a head that arrives split over many packets, and a 204 without a length', async () => {
    // A raw server writing the answer a byte at a time.
    const s = net.createServer((socket) => {
      const text = 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nCONTENT-LENGTH: 5\r\n\r\nhello';
      const byteByByte = (i: number): void => {
        if (i === text.length) {
          socket.once('data', () => socket.write('HTTP/1.1 204 No Content\r\n\r\n'));
          return;
        }
        socket.write(text[i]);
        setImmediate(() => byteByByte(i + 1));
      };
      socket.once('data', () => byteByByte(0));
    });
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    const c = new LeanConnection('127.0.0.1', (s.address() as AddressInfo).port);
    try {
      assert.equal(await c.get('/'), 200);
      assert.equal(await c.get('/'), 204);
    } finally {
      c.close();
      await new Promise((r) => s.close(r));
    }
  });

  it('refuses an answer it cannot size, and opens a new connection for the next request', async () => {
    const srv = await server((req, res) => {
      if (req.url === '/chunked') {
        res.write('part');
        res.end('rest');
      } else res.end('ok');
    });
    const c = new LeanConnection('127.0.0.1', srv.port);
    try {
      await assert.rejects(c.get('/chunked'), /without Content-Length/);
      assert.equal(await c.get('/'), 200);
      assert.equal(srv.connections(), 2);
    } finally {
      c.close();
      await srv.close();
    }
  });

  it('fails a request whose connection the server closes, and carries on after a kept-alive one is closed', async () => {
    const srv = await server((req, res) => {
      if (req.url === '/drop') req.socket.destroy();
      else {
        res.setHeader('connection', 'close');
        res.end('bye');
      }
    });
    const c = new LeanConnection('127.0.0.1', srv.port);
    try {
      await assert.rejects(c.get('/drop'), /closed the connection/);
      assert.equal(await c.get('/'), 200);
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(await c.get('/'), 200);
    } finally {
      c.close();
      await srv.close();
    }
  });

  it('drives the closed loop for reads and refuses anything but a GET', async () => {
    const srv = await server((_req, res) => res.end('{}'));
    try {
      const reads = await closedLoop({
        baseUrl: `http://127.0.0.1:${srv.port}`,
        connections: 4,
        durationMs: 200,
        expectStatus: 200,
        next: () => ({ method: 'GET', path: '/' }),
        lean: true,
      });
      assert.ok(reads.requests > 10);
      assert.equal(reads.errors, 0);
      const posts = await closedLoop({
        baseUrl: `http://127.0.0.1:${srv.port}`,
        connections: 1,
        durationMs: 50,
        expectStatus: 200,
        next: () => ({ method: 'POST', path: '/', body: '{}' }),
        lean: true,
      });
      assert.equal(posts.errors, posts.requests);
      assert.match(posts.firstError ?? '', /only GETs/);
    } finally {
      await srv.close();
    }
  });
});
