// Phase: ingestion. 8 clients (keep-alive connections) each POST batches of 100 new settled
// events to /api/v1/incoming-txn as fast as answers come back; 204 = every event committed.
// The events match activated merchants, so the API's asynchronous hand-over to Temporal
// and the worker's lifecycles run at the same time on the same 2 cores (as in production).
import { closedLoop, percentile } from './load';
import { purchase, type Fixture } from './fixtures';

export interface IngestionResult {
  eventsPerSecond: number;
  batchP50Ms: number;
  batchP99Ms: number;
  batches: number;
  errors: number;
  firstError?: string;
  seconds: number;
}

export async function runIngestion(options: {
  apiUrl: string;
  fixture: Fixture;
  seconds: number;
  clients: number;
  batchSize: number;
  runId: string;
  /** The bare floor server's path instead of the API's. */
  path?: string;
}): Promise<IngestionResult> {
  // Built once: every batch is the template with fresh ids, so the client's CPU stays small.
  const template = JSON.stringify(
    Array.from({ length: options.batchSize }, (_, i) => purchase(options.fixture, '__ID__', i)),
  );
  const pieces = template.split('"__ID__"');
  const headers = { authorization: `Bearer ${options.fixture.token}` };
  const result = await closedLoop({
    baseUrl: options.apiUrl,
    connections: options.clients,
    durationMs: options.seconds * 1000,
    expectStatus: 204,
    next: (connection, n) => {
      let body = pieces[0];
      for (let i = 1; i < pieces.length; i++) body += `"ing-${options.runId}-${connection}-${n}-${i}"${pieces[i]}`;
      return { method: 'POST', path: options.path ?? '/api/v1/incoming-txn', headers, body };
    },
  });
  const accepted = (result.requests - result.errors) * options.batchSize;
  return {
    eventsPerSecond: accepted / result.seconds,
    batchP50Ms: percentile(result.latenciesMs, 50),
    batchP99Ms: percentile(result.latenciesMs, 99),
    batches: result.requests,
    errors: result.errors,
    firstError: result.firstError,
    seconds: result.seconds,
  };
}
