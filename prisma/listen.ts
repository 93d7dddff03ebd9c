// A LISTEN connection kept open with bounded reconnect backoff. PostgreSQL NOTIFY wakes
// whoever waits on a change (the API's token cache, the worker's webhook relay) without
// polling; `onListening(false)` tells the caller to stop trusting what it has not seen, since
// notifications sent while the connection is down are lost.
import pg from 'pg';
import type { Logger } from '../core/logger';

export interface Listener {
  close(): Promise<void>;
}

export function listen(
  databaseUrl: string,
  channel: string,
  handlers: { onNotify(payload: string): void; onListening?(listening: boolean): void },
  logger: Logger,
): Listener {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`invalid channel name ${channel}`);
  let client: pg.Client | undefined;
  let closed = false;
  let delayMs = 500;
  const connect = async (): Promise<void> => {
    if (closed) return;
    const next = new pg.Client({ connectionString: databaseUrl });
    const lost = (err?: Error) => {
      handlers.onListening?.(false);
      if (client !== next) return;
      client = undefined;
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
