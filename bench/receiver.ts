// The local webhook receiver: answers 204 at once and reports each qualified_settlement's
// source ids with its arrival time. Signatures are not verified here (test/examples covers
// that); the benchmark only needs to know when each webhook arrived. Beside it, for the
// fairness phase, an endpoint that takes every request and never answers.
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface Arrival {
  externalId: string;
  transactionId: string;
  chgId: string;
  /** The envelope's webhookId. */
  webhookId: string;
  /** The request's path: endpoints that share this receiver differ by it. */
  path: string;
  /** performance.now() at arrival. */
  atMs: number;
  /** Date.now() at arrival, to compare with a webhook's created_at. */
  atEpochMs: number;
}

export interface Receiver {
  url: string;
  /** Replaced by each phase; called once per received webhook. */
  onWebhook: (arrival: Arrival) => void;
  received: number;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = { url: '', onWebhook: () => undefined, received: 0, close: async () => undefined };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const atMs = performance.now();
      const atEpochMs = Date.now();
      res.statusCode = 204;
      res.end();
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        if (body?.type !== 'qualified_settlement') return;
        receiver.received++;
        receiver.onWebhook({
          externalId: body.data.externalId,
          transactionId: body.data.transactionId,
          chgId: body.data.chgId,
          webhookId: body.webhookId,
          path: req.url ?? '',
          atMs,
          atEpochMs,
        });
      } catch {
        // not a webhook of ours; ignored
      }
    });
  });
  server.keepAliveTimeout = 30_000;
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  receiver.close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return receiver;
}

export interface HangingEndpoint {
  url: string;
  /** Requests that arrived whole (and were never answered). */
  requests: number;
  /** Connections open now. */
  openConnections(): number;
  /** Closes every connection (the senders see a reset) and the port. */
  close(): Promise<void>;
}

/** A receiver that accepts connections, reads each request and never answers it. */
export async function startHangingEndpoint(): Promise<HangingEndpoint> {
  const sockets = new Set<Socket>();
  const endpoint: HangingEndpoint = {
    url: '',
    requests: 0,
    openConnections: () => sockets.size,
    close: async () => undefined,
  };
  const server: Server = createServer((req) => {
    req.resume();
    req.on('end', () => void endpoint.requests++);
  });
  // No time-out of the server's own may end a request the sender is still waiting for.
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  endpoint.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  let closed: Promise<void> | undefined;
  endpoint.close = () =>
    (closed ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    }));
  return endpoint;
}
