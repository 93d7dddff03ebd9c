// Free loopback ports for the Temporal server's services. Not the operating system's pick
// (test/helpers/ports.ts): that comes from the ephemeral range above 32767, and the server's
// PostgreSQL schema keeps each member's port in a SMALLINT (cluster_membership.rpc_port), so a
// port above 32767 makes the server fail at start ("out of range for type smallint").
import { createServer } from 'node:net';

const LOW = 10_000;
const HIGH = 32_767;

function tryListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A port between 10000 and 32767 that is free right now and not handed out by this process before. */
export async function freeSmallPort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW + 1));
    if (given.has(port)) continue;
    if (await tryListen(port)) {
      given.add(port);
      return port;
    }
  }
  throw new Error(`no free port between ${LOW} and ${HIGH} after 200 tries`);
}

const given = new Set<number>();
