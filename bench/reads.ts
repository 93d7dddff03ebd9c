// Phase: reads. 32 keep-alive connections GET reward-detail (transactions processed earlier
// in the run, picked in turn) or the group's rewards summary, for a bounded time. Each
// request authenticates with the issuer token (one indexed lookup) like a real client.
import { closedLoop, percentile } from './load';

export interface ReadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  errors: number;
  firstError?: string;
}

export async function runReads(options: {
  apiUrl: string;
  token: string;
  paths: string[];
  seconds: number;
  connections: number;
}): Promise<ReadResult> {
  if (options.paths.length === 0) throw new Error('no paths to read');
  const headers = { authorization: `Bearer ${options.token}` };
  let i = 0;
  const r = await closedLoop({
    baseUrl: options.apiUrl,
    connections: options.connections,
    durationMs: options.seconds * 1000,
    expectStatus: 200,
    next: () => ({ method: 'GET', path: options.paths[i++ % options.paths.length], headers }),
    lean: true,
  });
  return {
    requestsPerSecond: (r.requests - r.errors) / r.seconds,
    p50Ms: percentile(r.latenciesMs, 50),
    p99Ms: percentile(r.latenciesMs, 99),
    requests: r.requests,
    errors: r.errors,
    firstError: r.firstError,
  };
}
