// Runs the reference receiver:
//   WEBHOOK_SECRET=whsec_... PORT=4000 node --import tsx examples/webhook-receiver/server.ts
// STORE_FILE=received.json keeps what was received across restarts.
import { createReceiverApp } from './app';
import { WebhookStore } from './store';

const secret = process.env.WEBHOOK_SECRET;
const port = Number(process.env.PORT ?? 4000);
if (!secret || !secret.startsWith('whsec_')) {
  console.error('WEBHOOK_SECRET must be the whsec_ secret from PUT /api/v2/webhook-endpoint');
  process.exit(2);
}
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  console.error('PORT must be 1..65535');
  process.exit(2);
}

const store = new WebhookStore(process.env.STORE_FILE);
createReceiverApp({ secret, store }).listen(port, () => {
  console.log(`webhook receiver listening on http://localhost:${port}`);
});
