// The local webhook receiver: answers 204 at once and reports each qualified_settlement's
// source ids with its arrival time. Signatures are not verified here (test/examples covers
// that); the benchmark only needs to know when each webhook arrived.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Arrival {
  externalId: string;
  transactionId: string;
  chgId: string;
  atMs: number;
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
          atMs,
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
