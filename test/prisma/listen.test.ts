// A LISTEN connection whose database host stops answering (a TCP proxy that stops forwarding,
// closing nothing) looks alive while nothing arrives; its heartbeat finds out within its bounds,
// the listener tells its owner to stop trusting what it has not heard (the token cache turns
// itself off), and once the host answers again it listens anew and hears notifications.
import assert from 'node:assert/strict';
import { listen, type Listener } from '../../prisma/listen';
import { ANSWER_MARGIN_MS, type DatabaseTimeouts } from '../../prisma/bounded-client';
import { createLogger } from '../../core/logger';
import { adminClient } from '../helpers/backends';
import { startSilentProxy, type SilentProxy } from '../helpers/silent-proxy';

const TIMEOUTS: DatabaseTimeouts = { connectTimeoutMs: 1_000, statementTimeoutMs: 500, transactionTimeoutMs: 5_000 };
const HEARTBEAT_MS = 500;
const CHANNEL = 'listen_test_channel';

describe('listen on a database host that stops answering', function () {
  this.timeout(60_000);
  let proxy: SilentProxy;
  let listener: Listener | undefined;
  const states: Array<{ listening: boolean; atMs: number }> = [];
  const heard: string[] = [];

  before(async () => {
    proxy = await startSilentProxy();
  });
  after(async () => {
    proxy.speak();
    await listener?.close();
    await proxy.close();
  });

  const until = async (what: string, check: () => boolean, boundMs: number) => {
    const deadline = performance.now() + boundMs;
    while (!check()) {
      assert.ok(performance.now() < deadline, `${what} within ${boundMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const listening = () => states.at(-1)?.listening === true;

  it('reports itself down within its heartbeat and bounds, then listens and hears again', async () => {
    listener = listen(
      proxy.databaseUrl,
      CHANNEL,
      {
        onNotify: (payload) => heard.push(payload),
        onListening: (on) => states.push({ listening: on, atMs: performance.now() }),
      },
      createLogger('silent'),
      TIMEOUTS,
      HEARTBEAT_MS,
    );
    await until('listening', listening, 10_000);

    proxy.silence();
    const silencedAtMs = performance.now();
    const boundMs = HEARTBEAT_MS + TIMEOUTS.statementTimeoutMs + ANSWER_MARGIN_MS + 1_500;
    await until('down', () => !listening(), boundMs);
    assert.ok(states.at(-1)!.atMs - silencedAtMs < boundMs);

    proxy.speak();
    // Reconnects with its backoff (0.5 s, doubling while connecting fails).
    await until('listening again', listening, 15_000);
    const admin = await adminClient();
    try {
      await admin.query(`SELECT pg_notify($1, 'after')`, [CHANNEL]);
    } finally {
      await admin.end();
    }
    await until('the notification', () => heard.includes('after'), 5_000);
  });
});
