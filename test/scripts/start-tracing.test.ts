// `npm start` with the standard OpenTelemetry variables (http/json to a collector): one settled
// purchase becomes one trace holding the API's and the worker's spans, each span's parent in
// the trace; the worker's /metrics still serves the Temporal SDK's metrics beside ours. The
// collector here is a stand-in that keeps what it is sent.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { devStackTestEnv, freeDevStackPorts, stopDevStack } from '../helpers/dev-stack';
import { freePort } from '../helpers/ports';
import { groupBody } from '../helpers/groups';
import { cardOf, settledEvent } from '../helpers/events';

const ROOT = join(__dirname, '..', '..');
const OPERATOR_TOKEN = 'op_start_tracing_test_0123456789abcdef0123456789';

interface ExportedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
}

/** An OTLP/HTTP collector stand-in: takes JSON trace exports, keeps their spans. */
function startCollector(): Promise<{ server: Server; url: string; spans: ExportedSpan[] }> {
  const spans: ExportedSpan[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      if (req.url === '/v1/traces' && req.headers['content-type']?.includes('json')) {
        for (const rs of JSON.parse(body).resourceSpans ?? []) {
          const service = rs.resource?.attributes?.find((a: any) => a.key === 'service.name')?.value?.stringValue;
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? [])
              spans.push({
                service,
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId || undefined,
                name: s.name,
              });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans }),
    ),
  );
}

describe('npm start with OTEL_EXPORTER_OTLP_ENDPOINT (http/json)', function () {
  this.timeout(300_000);
  let dataDir: string | undefined;
  let collector: Awaited<ReturnType<typeof startCollector>> | undefined;
  after(() => {
    collector?.server.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('exports one trace per settled purchase, holding the API and the worker, with no orphan parent', async () => {
    collector = await startCollector();
    dataDir = mkdtempSync(join(tmpdir(), 'rewards-start-tracing-'));
    const ports = await freeDevStackPorts();
    const api = `http://127.0.0.1:${ports.api}`;
    const workerMetricsPort = await freePort();
    const stack = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'start.ts')], {
      cwd: ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...devStackTestEnv(dataDir, ports),
        OPERATOR_TOKEN,
        // The worker's /metrics on, with Temporal's runtime metrics behind it.
        WORKER_METRICS_PORT: String(workerMetricsPort),
        TEMPORAL_METRICS_PORT: String(await freePort()),
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        // Exported within a second rather than the default five.
        OTEL_BSP_SCHEDULE_DELAY: '500',
      },
    });
    let output = '';
    stack.stdout.on('data', (d: Buffer) => (output += d.toString()));
    stack.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = once(stack, 'exit');
    const call = async (method: string, path: string, token: string, body?: unknown) => {
      const res = await fetch(`${api}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    };
    try {
      const startedAt = performance.now();
      for (;;) {
        assert.equal(stack.exitCode, null, `npm start exited:\n${output}`);
        const ready = await fetch(`${api}/readyz`).then(
          (r) => r.ok,
          () => false,
        );
        if (ready && /Worker state changed .*RUNNING/.test(output)) break;
        assert.ok(performance.now() - startedAt < 180_000, `not ready after 3 minutes:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      const issuer = (
        await call('POST', '/admin/v1/issuers', OPERATOR_TOKEN, { name: 'Traced', environment: 'sandbox' })
      ).body;
      const token = (await call('POST', `/admin/v1/issuers/${issuer.id}/tokens`, OPERATOR_TOKEN, {})).body.token;
      const group = (await call('POST', '/api/v2/chg', token, groupBody())).body;
      const event = settledEvent(cardOf(group));
      assert.equal((await call('POST', '/api/v1/incoming-txn', token, event)).status, 204);

      const spans = collector.spans;
      const deadline = performance.now() + 60_000;
      let trace: ExportedSpan[] = [];
      for (;;) {
        const request = spans.find((s) => s.name === 'POST /api/v1/incoming-txn');
        trace = request ? spans.filter((s) => s.traceId === request.traceId) : [];
        const services = new Set(trace.map((s) => s.service));
        if (
          services.has('rewards-api') &&
          trace.some((s) => s.service === 'rewards-worker' && s.name === 'RunWorkflow:transactionLifecycle')
        )
          break;
        assert.ok(
          performance.now() < deadline,
          `no complete trace: ${JSON.stringify(trace.map((s) => [s.service, s.name]))}`,
        );
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      assert.ok(trace.some((s) => s.service === 'rewards-worker' && s.name === 'RunActivity:settleTransaction'));
      assert.ok(
        trace.some((s) => s.service === 'rewards-worker' && s.name.startsWith('pg.query')),
        'the worker SQL',
      );
      assert.ok(
        trace.some((s) => s.service === 'rewards-api' && s.name.startsWith('pg.query')),
        'the API SQL',
      );
      const ids = new Set(trace.map((s) => s.spanId));
      const orphans = trace.filter((s) => s.parentSpanId && !ids.has(s.parentSpanId));
      assert.deepEqual(orphans, [], 'every parent is in the trace');
      assert.equal(trace.filter((s) => !s.parentSpanId).length, 1, 'one root: the request');

      // Tracing changes nothing of the worker's metrics: ours, then the Temporal SDK's.
      const metrics = await (await fetch(`http://127.0.0.1:${workerMetricsPort}/metrics`)).text();
      assert.match(metrics, /^rewards_lifecycle_outcomes_total\{/m);
      assert.match(metrics, /^temporal_workflow_completed(_total)?\{/m);
      assert.match(metrics, /^temporal_worker_task_slots_available\{/m);
    } finally {
      await stopDevStack(stack, exited);
    }
  });
});
