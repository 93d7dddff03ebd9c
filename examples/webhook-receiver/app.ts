// A reference webhook receiver for issuers: verifies the Standard Webhooks signature over
// the raw body (the library also rejects timestamps more than 5 minutes off), processes
// each webhookId once, and answers 2xx to a retry or replay of a webhook it already
// processed (SPEC.md section 6), so the sender stops retrying.
import Koa from 'koa';
import type { IncomingMessage } from 'node:http';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { sourceIdsOf, type WebhookStore } from './store';

/** Bodies are small; a bound keeps a hostile sender from filling memory. */
const MAX_BODY_BYTES = 256 * 1024;

export interface ReceiverOptions {
  secret: string;
  store: WebhookStore;
  /** Your business logic; throwing makes the sender retry. */
  process?: (envelope: { webhookId: string; type: string; data: Record<string, unknown> }) => Promise<void>;
}

export function createReceiverApp(options: ReceiverOptions): Koa {
  const verifier = new Webhook(options.secret);
  const app = new Koa();
  app.use(async (ctx) => {
    if (ctx.method !== 'POST') ctx.throw(405);
    const body = await rawBody(ctx.req);
    let envelope: { webhookId: string; type: string; data: Record<string, unknown> };
    try {
      envelope = verifier.verify(body, ctx.headers as Record<string, string>) as typeof envelope;
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      // Unsigned, tampered or stale: not ours to process. Nothing is stored as received.
      ctx.status = 401;
      ctx.body = { error: 'invalid_signature' };
      return;
    }
    const seen = options.store.get(envelope.webhookId);
    if (seen?.processingStatus === 'processed') {
      ctx.status = 200;
      ctx.body = { webhookId: envelope.webhookId, duplicate: true };
      return;
    }
    const row = {
      webhookId: envelope.webhookId,
      type: envelope.type,
      receivedAt: new Date().toISOString(),
      signatureVerified: true,
      sourceIds: sourceIdsOf(envelope.data ?? {}),
    };
    try {
      await options.process?.(envelope);
      options.store.put({ ...row, processingStatus: 'processed' });
      ctx.status = 200;
      ctx.body = { webhookId: envelope.webhookId, duplicate: false };
    } catch {
      options.store.put({ ...row, processingStatus: 'failed' });
      ctx.status = 500; // the sender retries on its schedule
      ctx.body = { error: 'processing_failed' };
    }
  });
  return app;
}

async function rawBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw Object.assign(new Error('body too large'), { status: 413, expose: true });
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
