// A TCP proxy between the service and the run's PostgreSQL that can stop answering without
// refusing or closing anything, as a database host does when it hangs or drops off the network:
// while silent it reads nothing from either side and forwards nothing (connections already open
// stay open, new ones are accepted and left waiting), and when it speaks again everything held
// flows on, as after a network partition heals.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { testDatabaseUrl } from './env';

export interface SilentProxy {
  /** The run's database URL, through the proxy. */
  databaseUrl: string;
  /** Stops forwarding in both directions; nothing is closed. */
  silence(): void;
  /** Forwards again, what was held first. */
  speak(): void;
  /** Connections from clients the proxy has open now. */
  readonly connections: number;
  close(): Promise<void>;
}

interface Pair {
  client: net.Socket;
  server?: net.Socket;
}

export async function startSilentProxy(targetUrl = testDatabaseUrl()): Promise<SilentProxy> {
  const target = new URL(targetUrl);
  const pairs = new Set<Pair>();
  let silent = false;

  const join = (pair: Pair) => {
    const server = net.connect(Number(target.port || 5432), target.hostname);
    pair.server = server;
    const end = () => {
      pair.client.destroy();
      server.destroy();
      pairs.delete(pair);
    };
    server.on('error', end).on('close', end);
    pair.client.on('error', end).on('close', end);
    pair.client.pipe(server);
    server.pipe(pair.client);
  };

  const proxy = net.createServer((client) => {
    const pair: Pair = { client };
    pairs.add(pair);
    client.on('close', () => {
      pair.server?.destroy();
      pairs.delete(pair);
    });
    client.on('error', () => client.destroy());
    if (silent) client.pause();
    else join(pair);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const url = new URL(targetUrl);
  url.hostname = '127.0.0.1';
  url.port = String((proxy.address() as AddressInfo).port);

  return {
    databaseUrl: url.toString(),
    silence() {
      silent = true;
      for (const { client, server } of pairs) {
        if (!server) continue;
        // Unpiped and paused: bytes wait in the kernel's buffers, unread and unanswered.
        client.unpipe(server);
        server.unpipe(client);
        client.pause();
        server.pause();
      }
    },
    speak() {
      silent = false;
      for (const pair of pairs) {
        if (!pair.server) {
          join(pair);
          continue;
        }
        pair.client.pipe(pair.server);
        pair.server.pipe(pair.client);
      }
    },
    get connections() {
      return pairs.size;
    },
    async close() {
      for (const { client, server } of pairs) {
        client.destroy();
        server?.destroy();
      }
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}
