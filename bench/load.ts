// A closed-loop HTTP load generator: `connections` loops, each with its own keep-alive
// socket, each sending its next request when the previous answer is in, for a bounded time.
// Ours rather than a dependency: node:http does it in these lines, and installing into the
// shared node_modules from a worktree would disturb the other worktrees. Reads may go through the
// lean client instead (bench/lean-http.ts), which costs the machine under test less.
import http from 'node:http';
import { LeanConnection } from './lean-http';

export interface RequestSpec {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadResult {
  requests: number;
  errors: number;
  /** First unexpected status or error, for the report. */
  firstError?: string;
  seconds: number;
  latenciesMs: number[];
}

export async function closedLoop(options: {
  baseUrl: string;
  connections: number;
  durationMs: number;
  expectStatus: number;
  next: (connection: number, n: number) => RequestSpec;
  /** Stops every loop early (e.g. a fixed amount of work is done). */
  stopWhen?: () => boolean;
  /** GETs only, each answer sized (Content-Length): the lean client (bench/lean-http.ts). */
  lean?: boolean;
}): Promise<LoadResult> {
  const url = new URL(options.baseUrl);
  const result: LoadResult = { requests: 0, errors: 0, seconds: 0, latenciesMs: [] };
  const started = performance.now();
  const deadline = started + options.durationMs;
  const loop = async (connection: number) => {
    const client = options.lean ? leanClient(url) : nodeClient(url);
    // Bounded by time and, as a safety net, by count.
    for (let n = 0; n < 10_000_000 && performance.now() < deadline && !options.stopWhen?.(); n++) {
      const spec = options.next(connection, n);
      const t0 = performance.now();
      try {
        const status = await client.send(spec);
        if (status !== options.expectStatus) {
          result.errors++;
          result.firstError ??= `HTTP ${status} on ${spec.method} ${spec.path}`;
        }
      } catch (err) {
        result.errors++;
        result.firstError ??= String(err);
      }
      result.latenciesMs.push(performance.now() - t0);
      result.requests++;
    }
    client.close();
  };
  await Promise.all(Array.from({ length: options.connections }, (_, i) => loop(i)));
  result.seconds = (performance.now() - started) / 1000;
  return result;
}

interface Client {
  send(spec: RequestSpec): Promise<number>;
  close(): void;
}

function nodeClient(url: URL): Client {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  return { send: (spec) => send(agent, url, spec), close: () => agent.destroy() };
}

function leanClient(url: URL): Client {
  const connection = new LeanConnection(url.hostname, Number(url.port));
  return {
    send: (spec) => {
      if (spec.method !== 'GET' || spec.body !== undefined) throw new Error('the lean client only GETs');
      return connection.get(spec.path, spec.headers);
    },
    close: () => connection.close(),
  };
}

export function send(agent: http.Agent | undefined, url: URL, spec: RequestSpec): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...(spec.headers ?? {}) };
    if (spec.body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(spec.body);
    }
    const req = http.request(
      { host: url.hostname, port: url.port, method: spec.method, path: spec.path, headers, agent },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error('request timed out after 30 s')));
    req.on('error', reject);
    req.end(spec.body);
  });
}

/** Nearest-rank percentile of a sample (0 < p <= 100). */
export function percentile(sample: number[], p: number): number {
  if (sample.length === 0) return NaN;
  const sorted = [...sample].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
