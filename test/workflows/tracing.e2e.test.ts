// One trace per purchase (core/tracing.ts), through the real API, worker, PostgreSQL and
// Temporal dev server, collected by an in-memory exporter: the ingestion request's server span,
// its SQL insert, the hand-over's Signal-With-Start, the workflow, the settlement step with its
// SQL, and the webhook's HTTP attempt all carry one trace id, each span's parent in the trace; a
// settlement after its authorization has its signal's handling, its step, its SQL and its webhook
// in its own request's trace, linked both ways with the workflow in the authorization's; a read
// request gets its server span and SQL. Tracing is stopped after, so no other test pays.
import assert from 'node:assert/strict';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { startStack, type Stack } from '../helpers/stack';
import type { TestIssuer } from '../helpers/app';
import { authEvent, settledEvent, type CardRef } from '../helpers/events';
import { purchaseScenario } from '../helpers/scenario';
import { startReceiver, waitFor, type Receiver } from '../helpers/webhooks';
import { startTracing, type Tracing } from '../../core/tracing';

describe('tracing: one trace per purchase (end to end)', function () {
  this.timeout(120_000);
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing;
  let stack: Stack;
  let issuer: TestIssuer;
  let receiver: Receiver;
  let group: any;
  let card: CardRef;
  let merchant: any;

  before(async () => {
    tracing = startTracing('rewards-test', { processor: new SimpleSpanProcessor(exporter) });
    stack = await startStack({ tracing });
    receiver = await startReceiver();
    ({ issuer, group, card, merchant } = await purchaseScenario(stack.app, { offer: { cashbackRateBps: 500 } }));
    assert.equal((await issuer.call('PUT', '/api/v2/webhook-endpoint', { url: receiver.url })).status, 201);
  });
  after(async () => {
    await stack?.stop();
    await receiver?.close();
    await tracing?.shutdown();
  });

  const spans = () => exporter.getFinishedSpans();
  const ofTrace = (traceId: string) => spans().filter((s) => s.spanContext().traceId === traceId);
  const named = (list: ReadableSpan[], pattern: RegExp) => list.filter((s) => pattern.test(s.name));
  const statement = (s: ReadableSpan) => String(s.attributes['db.statement'] ?? '');

  /** Every span's parent is a span of the trace, but the root's. */
  function assertConnected(trace: ReadableSpan[], root: ReadableSpan) {
    const ids = new Set(trace.map((s) => s.spanContext().spanId));
    for (const s of trace) {
      if (s === root) continue;
      assert.ok(s.parentSpanId && ids.has(s.parentSpanId), `${s.name} has its parent in the trace`);
    }
    assert.equal(root.parentSpanId, undefined, 'the request span is the root');
  }

  /**
   * The trace of `root` once every span in it has its parent there. The in-memory exporter takes
   * a span as it ends, so a parent missing is one still open: the hand-over's Signal-With-Start
   * span ends when Temporal answers the API, which may come after the worker has run the workflow.
   */
  const wholeTrace = (root: ReadableSpan) =>
    waitFor('every parent in the trace', async () => {
      const trace = ofTrace(root.spanContext().traceId);
      const ids = new Set(trace.map((s) => s.spanContext().spanId));
      return trace.every((s) => s === root || (s.parentSpanId && ids.has(s.parentSpanId))) ? trace : undefined;
    });

  /** Whether `child` descends from `ancestor` in the trace. */
  function descends(trace: ReadableSpan[], child: ReadableSpan, ancestor: ReadableSpan): boolean {
    const byId = new Map(trace.map((s) => [s.spanContext().spanId, s]));
    for (let s: ReadableSpan | undefined = child; s; s = s.parentSpanId ? byId.get(s.parentSpanId) : undefined)
      if (s === ancestor) return true;
    return false;
  }

  it('follows a settled purchase from the HTTP request to the webhook attempt in one trace', async () => {
    const event = settledEvent(card, { merchantId: merchant.id });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', event)).status, 204);
    await waitFor('the webhook', async () => (receiver.requests.length > 0 ? true : undefined));
    const request = await waitFor('the ingestion span', async () =>
      named(spans(), /^POST \/api\/v1\/incoming-txn$/).find((s) => s.attributes['http.response.status_code'] === 204),
    );
    const traceId = request.spanContext().traceId;
    const attempt = await waitFor(
      'the attempt span in the trace',
      async () => named(ofTrace(traceId), /^webhook qualified_settlement$/)[0],
    );
    // The workflow's span ends, and is exported, when the run completes.
    await waitFor('the workflow span', async () => named(ofTrace(traceId), /^RunWorkflow:transactionLifecycle$/)[0]);
    const trace = await wholeTrace(request);
    const insert = trace.find((s) => statement(s).includes('INSERT INTO ingested_event'));
    const start = named(trace, /^SignalWithStartWorkflow:transactionLifecycle$/)[0];
    const workflow = named(trace, /^RunWorkflow:transactionLifecycle$/)[0];
    const settle = named(trace, /^RunActivity:settleTransaction$/)[0];
    for (const [what, span] of Object.entries({ insert, start, workflow, settle }))
      assert.ok(span, `${what} span in the trace (${trace.map((s) => s.name).join(', ')})`);
    assert.ok(descends(trace, insert!, request), 'the insert runs in the request');
    assert.ok(descends(trace, start, request), 'the hand-over follows the request');
    assert.ok(descends(trace, workflow, start), 'the workflow follows its start');
    assert.ok(descends(trace, settle, workflow), 'the settlement runs in the workflow');
    const settleSql = trace.filter((s) => s.kind === 2 /* CLIENT */ && statement(s) && descends(trace, s, settle));
    assert.ok(settleSql.length > 0, 'the settlement SQL is in the settlement span');
    assert.equal(attempt.attributes['http.response.status_code'], 204);
    assertConnected(trace, request);
    if (process.env.SHOW_TRACE) console.log(trace.map((s) => `${s.name} ${statement(s).slice(0, 40)}`).join('\n'));
  });

  /** Whether `span` carries a link to `target` (a span of another trace). */
  const linksTo = (span: ReadableSpan, target: ReadableSpan) =>
    span.links.some(
      (l) => l.context.traceId === target.spanContext().traceId && l.context.spanId === target.spanContext().spanId,
    );

  it('puts the work of a settlement that follows an authorization in its request trace, linked to the purchase', async () => {
    exporter.reset();
    const auth = authEvent(card, { merchantId: merchant.id });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-auth', auth)).status, 204);
    const delivered = receiver.requests.length;
    await waitFor('the qualified_auth webhook', async () => (receiver.requests.length > delivered ? true : undefined));
    const settled = settledEvent(card, { merchantId: merchant.id, authorizationId: auth.id });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', settled)).status, 204);

    const request = (path: RegExp) =>
      waitFor(`the ${path.source} span`, async () =>
        named(spans(), path).find((s) => s.attributes['http.response.status_code'] === 204),
      );
    const authRequest = await request(/^POST \/api\/v1\/incoming-auth$/);
    const settlementRequest = await request(/^POST \/api\/v1\/incoming-txn$/);
    // The purchase's workflow ends, and its span is exported, once the settlement is posted.
    const workflow = await waitFor(
      'the workflow span',
      async () => named(ofTrace(authRequest.spanContext().traceId), /^RunWorkflow:transactionLifecycle$/)[0],
    );
    const settlementTrace = settlementRequest.spanContext().traceId;
    const attempt = await waitFor(
      'the settlement webhook attempt',
      async () => named(spans(), /^webhook qualified_settlement$/)[0],
    );
    const trace = await wholeTrace(settlementRequest);
    const handled = named(trace, /^HandleSignal:settlement$/)[0];
    const settle = named(trace, /^RunActivity:settleTransaction$/)[0];
    for (const [what, span] of Object.entries({ handled, settle }))
      assert.ok(span, `${what} span in the settlement's trace (${trace.map((s) => s.name).join(', ')})`);
    assert.ok(descends(trace, settle, handled), 'the settlement step follows its signal');
    assert.ok(
      trace.some((s) => s.kind === 2 /* CLIENT */ && statement(s) !== '' && descends(trace, s, settle)),
      'the settlement SQL is in the settlement step',
    );
    assert.equal(attempt.spanContext().traceId, settlementTrace, 'the webhook attempt is in the settlement trace');
    assertConnected(trace, settlementRequest);
    // Linked both ways with the purchase's workflow, which lives in the authorization's trace.
    assert.ok(linksTo(handled, workflow), 'the signal links to the workflow it reached');
    assert.ok(linksTo(workflow, handled), 'the workflow links to the signal it handled');
  });

  it('gives a read request its server span and its SQL', async () => {
    exporter.reset();
    const res = await issuer.call('GET', `/api/v2/chg/${group.id}/rewards/summary`);
    assert.equal(res.status, 200);
    const read = await waitFor(
      'the read span',
      async () => named(spans(), /^GET \/api\/v2\/chg\/:chgId\/rewards\/summary$/)[0],
    );
    const trace = ofTrace(read.spanContext().traceId);
    assert.ok(
      trace.some((s) => s !== read && statement(s) !== '' && descends(trace, s, read)),
      'SQL under the request',
    );
    assertConnected(trace, read);
  });
});
