// Webhook test helpers: a real local receiver on 127.0.0.1 whose answers a test scripts,
// webhook records written the way the lifecycle writes them, and polling for a state.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import assert from 'node:assert/strict';
import type { Db } from '../../prisma/client';
import { recordWebhook, type WebhookType } from '../../activities/webhooks/record';
import type { TestIssuer } from './app';

/** A status code to answer with, or 'hang': never answer (the sender's time-out must fire). */
export type ReceiverAnswer = number | 'hang';

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** Replaces the script: answer for the n-th request (0-based). */
  answer: (n: number) => ReceiverAnswer;
  close(): Promise<void>;
}

export async function startReceiver(answer: (n: number) => ReceiverAnswer = () => 204): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const receiver: Receiver = { url: '', requests, answer, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const n = requests.length;
      requests.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const reply = receiver.answer(n);
      if (reply === 'hang') return;
      res.statusCode = reply;
      res.end();
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  receiver.close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return receiver;
}

/** A URL where nothing listens: a port taken and released at once. */
export async function deadUrl(): Promise<string> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}/hooks`;
}

/** Configures the issuer's endpoint through the API and returns its signing secret. */
export async function configureEndpoint(issuer: TestIssuer, url: string, enabledTypes?: string[]): Promise<string> {
  const res = await issuer.call('PUT', '/api/v2/webhook-endpoint', { url, ...(enabledTypes ? { enabledTypes } : {}) });
  assert.ok(res.status === 201 || res.status === 200, res.text);
  return res.body.signingSecret;
}

/** A webhook record as the lifecycle's activities write it (same function, own transaction). */
/**
 * A webhook record as the relay leaves one it handed to a WebhookDelivery workflow: tests that
 * drive that workflow themselves get a row no relay of the run will also deliver.
 */
export async function newWebhookRecord(db: Db, issuerId: string, type: WebhookType = 'qualified_settlement'): Promise<string> {
  const sourceEventId = `txn_${randomUUID()}`;
  return db.$transaction(async (tx) => {
    const id = await recordWebhook(tx, {
      issuerId,
      type,
      sourceEventId,
      at: new Date(),
      data: { chgId: `chg_${randomUUID()}`, transactionId: sourceEventId, externalId: `ext-${randomUUID()}`, rewardEventIds: [], rewardGrantIds: [], earnedAmountMinor: 500 },
    });
    await tx.webhook.update({ where: { id }, data: { relayedAt: new Date() } });
    return id;
  });
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function waitForWebhookStatus(db: Db, webhookId: string, statuses: string[], timeoutMs?: number) {
  return waitFor(`webhook ${webhookId} to reach ${statuses.join('|')}`, async () => {
    const row = await db.webhook.findUniqueOrThrow({ where: { id: webhookId } });
    return statuses.includes(row.status) ? row : undefined;
  }, timeoutMs);
}
