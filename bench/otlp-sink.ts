// The tracing phase's collector: a local HTTP server that takes what the service processes
// export over OTLP (POST /v1/traces, where OTEL_EXPORTER_OTLP_ENDPOINT sends traces) and answers
// 200 at once. It counts requests and bytes as they arrive; for a JSON body (http/json) also the
// spans, by service, decoded only when the counts are read (the phase reads them between drains),
// so the sink's parsing, which a real collector does on another machine, does not compete with
// the drain it measures. A protobuf body (http/protobuf) is not decoded: its spans stay
// uncounted. Runs in the bench process, beside the load generator.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export interface OtlpCounts {
  /** POST /v1/traces requests answered. */
  requests: number;
  /** Their bodies' bytes as sent (compressed, if the exporter compresses). */
  bytes: number;
  /** Spans in the JSON bodies; null once a body came that was not JSON (protobuf). */
  spans: number | null;
  /** Spans by the resource's service.name (JSON bodies only). */
  spansByService: Record<string, number>;
  /** JSON bodies that did not parse. */
  unreadable: number;
  /** Requests to any other path or method (answered 404). */
  other: number;
}

export interface OtlpSink {
  /** OTEL_EXPORTER_OTLP_ENDPOINT for the processes that export here. */
  endpoint: string;
  /** A copy of the counts so far. */
  counts(): OtlpCounts;
  /** performance.now() of the last request; -Infinity before the first. */
  lastRequestAtMs(): number;
  close(): Promise<void>;
}

interface OtlpJson {
  resourceSpans?: Array<{
    resource?: { attributes?: Array<{ key?: string; value?: { stringValue?: string } }> };
    scopeSpans?: Array<{ spans?: unknown[] }>;
  }>;
}

/** Spans of one OTLP/JSON ExportTraceServiceRequest, by service.name ("unknown" without one). */
export function countSpans(body: unknown): Record<string, number> {
  const byService: Record<string, number> = {};
  for (const resourceSpans of (body as OtlpJson | null)?.resourceSpans ?? []) {
    const service =
      resourceSpans.resource?.attributes?.find((a) => a.key === 'service.name')?.value?.stringValue ?? 'unknown';
    const spans = (resourceSpans.scopeSpans ?? []).reduce((n, scope) => n + (scope.spans?.length ?? 0), 0);
    byService[service] = (byService[service] ?? 0) + spans;
  }
  return byService;
}

/** What arrived between two readings of the same sink. */
export function countsBetween(before: OtlpCounts, after: OtlpCounts): OtlpCounts {
  const spansByService: Record<string, number> = {};
  for (const [service, n] of Object.entries(after.spansByService))
    spansByService[service] = n - (before.spansByService[service] ?? 0);
  return {
    requests: after.requests - before.requests,
    bytes: after.bytes - before.bytes,
    spans: after.spans === null || before.spans === null ? null : after.spans - before.spans,
    spansByService,
    unreadable: after.unreadable - before.unreadable,
    other: after.other - before.other,
  };
}

export async function startOtlpSink(): Promise<OtlpSink> {
  const counts: OtlpCounts = { requests: 0, bytes: 0, spans: 0, spansByService: {}, unreadable: 0, other: 0 };
  let lastRequestAt = -Infinity;
  const undecoded: Array<{ body: Buffer; gzip: boolean }> = [];
  const decode = () => {
    for (const { body, gzip } of undecoded.splice(0)) {
      try {
        const text = (gzip ? gunzipSync(body) : body).toString('utf8');
        for (const [service, n] of Object.entries(countSpans(JSON.parse(text)))) {
          counts.spansByService[service] = (counts.spansByService[service] ?? 0) + n;
          if (counts.spans !== null) counts.spans += n;
        }
      } catch {
        counts.unreadable++;
      }
    }
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      lastRequestAt = performance.now();
      if (req.method !== 'POST' || req.url?.split('?')[0] !== '/v1/traces') {
        counts.other++;
        res.statusCode = 404;
        res.end();
        return;
      }
      const body = Buffer.concat(chunks);
      counts.requests++;
      counts.bytes += body.length;
      const json = (req.headers['content-type'] ?? '').startsWith('application/json');
      // An empty body is an empty ExportTraceServiceResponse in protobuf; JSON needs an object.
      res.statusCode = 200;
      if (json) res.setHeader('content-type', 'application/json');
      res.end(json ? '{}' : undefined);
      if (!json) {
        counts.spans = null;
        return;
      }
      // Decoded when the counts are read, after a drain, not while the drain is measured.
      undecoded.push({ body, gzip: req.headers['content-encoding'] === 'gzip' });
    });
  });
  server.keepAliveTimeout = 30_000;
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts: () => {
      decode();
      return { ...counts, spansByService: { ...counts.spansByService } };
    },
    lastRequestAtMs: () => lastRequestAt,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * Resolves once nothing has arrived for `quietMs` (the batch span processors export every 5 s by
 * default, OTEL_BSP_SCHEDULE_DELAY), or after `maxMs` at most.
 */
export async function sinkQuiet(sink: OtlpSink, quietMs: number, maxMs: number): Promise<void> {
  const deadline = performance.now() + maxMs;
  for (;;) {
    const now = performance.now();
    if (now - sink.lastRequestAtMs() >= quietMs || now >= deadline) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}
