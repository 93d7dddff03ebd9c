// `npm start` with the standard OpenTelemetry variables (http/json to a collector): each request
// that takes part in a purchase is one trace holding the API's and the worker's spans, each span's
// parent in the trace. A settled purchase is one trace, from its request to its webhook attempt;
// a purchase that began with an authorization is two, the authorization's (the workflow, the
// preview, its webhook) and the settlement's (the signal's handling, the settle step and its SQL,
// its webhook), linked both ways. The spans are read once the stack has stopped: every process
// flushes its exporter as it stops, so what the collector holds then is all the processes ever
// ended, and a span missing then was lost, not late. The worker's /metrics still serves the
// Temporal SDK's metrics beside ours. The collector here is a stand-in that keeps what it is sent.
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
import { authEvent, cardOf, settledEvent } from '../helpers/events';

const ROOT = join(__dirname, '..', '..');
const OPERATOR_TOKEN = 'op_start_tracing_test_0123456789abcdef0123456789';

interface ExportedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  requestId?: string;
  links: Array<{ traceId: string; spanId: string }>;
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
                requestId: s.attributes?.find((a: any) => a.key === 'rewards.request_id')?.value?.stringValue,
                links: (s.links ?? []).map((l: any) => ({ traceId: l.traceId, spanId: l.spanId })),
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

/** A webhook receiver that answers 204 and keeps each webhook's type. */
function startReceiver(): Promise<{ server: Server; url: string; types: string[] }> {
  const types: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      types.push(JSON.parse(body).type);
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, types }),
    ),
  );
}

/** Asserts that `trace` is one request's: the request is its only root, every other span's parent is in it. */
function assertWhole(trace: ExportedSpan[], what: string): void {
  const ids = new Set(trace.map((s) => s.spanId));
  const orphans = trace.filter((s) => s.parentSpanId && !ids.has(s.parentSpanId));
  assert.deepEqual(orphans, [], `${what}: every parent is in the trace`);
  const roots = trace.filter((s) => !s.parentSpanId);
  assert.deepEqual(
    roots.map((s) => [s.service, s.name.split(' ')[0]]),
    [['rewards-api', 'POST']],
    `${what}: one root, the request`,
  );
}

function has(trace: ExportedSpan[], service: string, name: string | RegExp): ExportedSpan {
  const found = trace.find(
    (s) => s.service === service && (typeof name === 'string' ? s.name === name : name.test(s.name)),
  );
  assert.ok(found, `${service} ${name} in ${JSON.stringify(trace.map((s) => [s.service, s.name]))}`);
  return found;
}

/** Whether `child` descends from `ancestor` in `trace`. */
function descends(trace: ExportedSpan[], child: ExportedSpan, ancestor: ExportedSpan): boolean {
  const byId = new Map(trace.map((s) => [s.spanId, s]));
  for (let s: ExportedSpan | undefined = child; s; s = s.parentSpanId ? byId.get(s.parentSpanId) : undefined)
    if (s === ancestor) return true;
  return false;
}

const linksTo = (span: ExportedSpan, target: ExportedSpan) =>
  span.links.some((l) => l.traceId === target.traceId && l.spanId === target.spanId);

describe('npm start with OTEL_EXPORTER_OTLP_ENDPOINT (http/json)', function () {
  this.timeout(300_000);
  let dataDir: string | undefined;
  let collector: Awaited<ReturnType<typeof startCollector>> | undefined;
  let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
  after(() => {
    collector?.server.close();
    receiver?.server.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('exports one whole trace per request of a purchase, the settlement after an authorization linked to it', async () => {
    collector = await startCollector();
    receiver = await startReceiver();
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
      },
    });
    let output = '';
    stack.stdout.on('data', (d: Buffer) => (output += d.toString()));
    stack.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = once(stack, 'exit');
    const call = async (method: string, path: string, token: string, body?: unknown, requestId?: string) => {
      const res = await fetch(`${api}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          ...(requestId ? { 'x-request-id': requestId } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    };
    const until = async (what: string, done: () => boolean) => {
      const deadline = performance.now() + 60_000;
      while (!done()) {
        assert.ok(performance.now() < deadline, `${what} within a minute:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
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
      const merchant = (
        await call('POST', '/admin/v1/merchants', OPERATOR_TOKEN, { name: 'Traced Coffee', category: 'dining' })
      ).body;
      const offer = await call('POST', `/admin/v1/merchants/${merchant.id}/offers`, OPERATOR_TOKEN, {
        title: '5% back',
        cashbackRateBps: 500,
        brandedRateBps: 0,
        startsAt: new Date(Date.now() - 86_400_000).toISOString(),
      });
      assert.equal(offer.status, 201);
      assert.equal(
        (await call('PUT', `/api/v2/chg/${group.id}/merchant/${merchant.id}/activation`, token, {})).status,
        201,
      );
      assert.equal((await call('PUT', '/api/v2/webhook-endpoint', token, { url: receiver.url })).status, 201);
      const card = cardOf(group);
      const merchantId = merchant.id;

      // A settled purchase, then one that begins with an authorization.
      const settled = settledEvent(card, { merchantId });
      assert.equal((await call('POST', '/api/v1/incoming-txn', token, settled, 'trace-settled')).status, 204);
      const auth = authEvent(card, { merchantId });
      assert.equal((await call('POST', '/api/v1/incoming-auth', token, auth, 'trace-auth')).status, 204);
      await until('the qualified_auth webhook', () => receiver!.types.includes('qualified_auth'));
      const settlement = settledEvent(card, { merchantId, authorizationId: auth.id });
      assert.equal((await call('POST', '/api/v1/incoming-txn', token, settlement, 'trace-settlement')).status, 204);
      await until(
        'both qualified_settlement webhooks',
        () => receiver!.types.filter((t) => t === 'qualified_settlement').length === 2,
      );

      // Tracing changes nothing of the worker's metrics: ours, then the Temporal SDK's.
      const metrics = await (await fetch(`http://127.0.0.1:${workerMetricsPort}/metrics`)).text();
      assert.match(metrics, /^rewards_lifecycle_outcomes_total\{/m);
      assert.match(metrics, /^temporal_workflow_completed(_total)?\{/m);
      assert.match(metrics, /^temporal_worker_task_slots_available\{/m);
    } finally {
      // Every process flushes its spans as it stops.
      await stopDevStack(stack, exited);
    }

    const traceOf = (requestId: string) => {
      const request = collector!.spans.find((s) => s.requestId === requestId);
      assert.ok(request, `the request span of ${requestId}`);
      return collector!.spans.filter((s) => s.traceId === request.traceId);
    };
    const settledTrace = traceOf('trace-settled');
    assertWhole(settledTrace, 'the settled purchase');
    has(settledTrace, 'rewards-api', /^pg\.query/);
    has(settledTrace, 'rewards-worker', 'RunWorkflow:transactionLifecycle');
    has(settledTrace, 'rewards-worker', 'RunActivity:settleTransaction');
    has(settledTrace, 'rewards-worker', /^pg\.query/);
    has(settledTrace, 'rewards-worker', 'webhook qualified_settlement');

    const authTrace = traceOf('trace-auth');
    assertWhole(authTrace, 'the authorization');
    const workflow = has(authTrace, 'rewards-worker', 'RunWorkflow:transactionLifecycle');
    has(authTrace, 'rewards-worker', 'RunActivity:previewAuthorization');
    has(authTrace, 'rewards-worker', 'webhook qualified_auth');

    const settlementTrace = traceOf('trace-settlement');
    assertWhole(settlementTrace, 'the settlement after its authorization');
    const handled = has(settlementTrace, 'rewards-worker', 'HandleSignal:settlement');
    const settle = has(settlementTrace, 'rewards-worker', 'RunActivity:settleTransaction');
    assert.ok(descends(settlementTrace, settle, handled), 'the settle step follows its signal');
    assert.ok(
      settlementTrace.some(
        (s) => s.service === 'rewards-worker' && s.name.startsWith('pg.query') && descends(settlementTrace, s, settle),
      ),
      'the settle step SQL',
    );
    has(settlementTrace, 'rewards-worker', 'webhook qualified_settlement');
    assert.ok(linksTo(handled, workflow), 'the settlement links to the purchase workflow');
    assert.ok(linksTo(workflow, handled), 'the purchase workflow links to the settlement');
  });
});
