// A LISTEN connection kept open with bounded reconnect backoff. PostgreSQL NOTIFY wakes
// whoever waits on a change (the API's token cache, the worker's webhook relay) without
// polling; `onListening(false)` tells the caller to stop trusting what it has not seen, since
// notifications sent while the connection is down are lost.
//
// A LISTEN connection is idle by nature, so a server that stops answering (rather than ending
// the connection) would leave it looking alive while nothing arrives: a heartbeat statement
// every HEARTBEAT_MS, bound like any other statement (prisma/bounded-client.ts), finds that
// out, and the connection is dropped and opened again like one the server ended.
import pg from 'pg';
import type { Logger } from '../core/logger';
import { boundedClient, DEFAULT_DATABASE_TIMEOUTS, type DatabaseTimeouts } from './bounded-client';

/** How often an idle LISTEN connection proves the server still answers. */
export const HEARTBEAT_MS = 5_000;

export interface Listener {
  close(): Promise<void>;
}

export function listen(
  databaseUrl: string,
  channel: string,
  handlers: { onNotify(payload: string): void; onListening?(listening: boolean): void },
  logger: Logger,
  timeouts: DatabaseTimeouts = DEFAULT_DATABASE_TIMEOUTS,
  heartbeatMs = HEARTBEAT_MS,
): Listener {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`invalid channel name ${channel}`);
  const Client = boundedClient(timeouts);
  let client: pg.Client | undefined;
  let closed = false;
  let delayMs = 500;
  const connect = async (): Promise<void> => {
    if (closed) return;
    const next = new Client({ connectionString: databaseUrl });
    let heartbeat: NodeJS.Timeout | undefined;
    const lost = (err?: Error) => {
      clearInterval(heartbeat);
      handlers.onListening?.(false);
      if (client !== next) return;
      client = undefined;
      // Whatever failed (the connect, LISTEN, the heartbeat), this client is done with: a client
      // still connected, one whose LISTEN failed, would otherwise keep its server connection.
      next.end().catch(() => undefined);
      if (!closed) {
        logger.warn({ err, channel }, 'LISTEN connection lost; reconnecting');
        setTimeout(() => void connect(), delayMs).unref();
        delayMs = Math.min(delayMs * 2, 30_000);
      }
    };
    next.on('error', lost);
    next.on('end', () => lost());
    next.on('notification', (msg) => {
      if (msg.channel === channel) handlers.onNotify(msg.payload ?? '');
    });
    try {
      client = next;
      await next.connect();
      await next.query(`LISTEN ${channel}`);
      delayMs = 500;
      handlers.onListening?.(true);
      // One heartbeat at a time; a failed one also fails the connection ('error' above), whose
      // rejection is that one.
      let beating = false;
      heartbeat = setInterval(() => {
        if (beating) return;
        beating = true;
        next
          .query('SELECT 1')
          .catch(() => undefined)
          .finally(() => (beating = false));
      }, heartbeatMs);
      heartbeat.unref();
    } catch (err) {
      lost(err as Error);
    }
  };
  void connect();
  return {
    async close() {
      closed = true;
      handlers.onListening?.(false);
      await client?.end().catch(() => undefined);
    },
  };
}
