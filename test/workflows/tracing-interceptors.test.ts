// The workflow side of tracing (workflows/tracing-interceptors.ts) in the real lifecycle workflow,
// with stub activities on the time-skipping test server: the spans it hands the worker, their
// parents, and the trace context each activity receives, for a sampled parent, an unsampled one
// and none. The whole path with the API, PostgreSQL and the exporter is tracing.e2e.test.ts.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Resource } from '@opentelemetry/resources';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { defaultPayloadConverter } from '@temporalio/common';
import { WorkflowClient, type WorkflowClientInterceptor } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { WORKFLOW_TRACING_MODULE } from '../../worker/tracing';
import { workflowSpanSinks } from '../../worker/workflow-spans';
import { WORKFLOWS_PATH } from '../../worker/worker';
import { NO_HANDOVER_RELEASE } from '../../worker/handover-release';
import { startTimeSkippingServer } from '../helpers/time-skipping';
import { TRACE_HEADER, parseTraceparent } from '../../workflows/trace-context';
import { authorizationSignal, lifecycleInput, settlementSignal } from '../../workflows/lifecycle-signals';
import { transactionLifecycle } from '../../workflows/transaction-lifecycle';
import type { LifecycleActivities, StepOutcome } from '../../activities/lifecycle/types';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';

/** A client that sends `traceparent` with the start and the signals, as the API's hand-over does. */
function clientSending(env: TestWorkflowEnvironment, traceparent: string | undefined): WorkflowClient {
  const withTrace = <T extends { headers: Record<string, unknown> }>(input: T): T =>
    traceparent
      ? { ...input, headers: { ...input.headers, [TRACE_HEADER]: defaultPayloadConverter.toPayload({ traceparent }) } }
      : input;
  const interceptor: WorkflowClientInterceptor = {
    signalWithStart: (input, next) => next(withTrace(input)),
    signal: (input, next) => next(withTrace(input)),
  };
  return new WorkflowClient({ connection: env.connection, interceptors: [interceptor] });
}

describe('workflow tracing interceptors (time-skipping, stub activities)', function () {
  this.timeout(120_000);
  let env: TestWorkflowEnvironment;
  let bundle: WorkflowBundleWithSourceMap;

  before(async () => {
    env = await startTimeSkippingServer();
    bundle = await bundleWorkflowCode({
      workflowsPath: WORKFLOWS_PATH,
      workflowInterceptorModules: [WORKFLOW_TRACING_MODULE],
    });
  });
  after(async () => {
    await env?.teardown();
  });

  /** Runs `drive` against a traced worker with stub steps; the spans handed over and what each activity saw. */
  async function traced(drive: (taskQueue: string, workflowId: string) => Promise<void>) {
    const exporter = new InMemorySpanExporter();
    const received: Array<string | undefined> = [];
    const receivedBy: Record<string, string | undefined> = {};
    const outcome = async (): Promise<StepOutcome> => ({ status: 'matched', merchantId: 'mp_stub' });
    const previewed = async (): Promise<StepOutcome> => ({ status: 'previewed', merchantId: 'mp_stub' });
    const taskQueue = `traced-${randomUUID()}`;
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: bundle,
      activities: { settleTransaction: outcome, previewAuthorization: previewed } as Partial<LifecycleActivities>,
      interceptors: {
        activity: [
          (ctx) => ({
            inbound: {
              execute: (input, next) => {
                const header = input.headers[TRACE_HEADER];
                const traceparent =
                  header && defaultPayloadConverter.fromPayload<{ traceparent: string }>(header).traceparent;
                received.push(traceparent);
                receivedBy[ctx.info.activityType] = traceparent;
                return next(input);
              },
            },
          }),
        ],
      },
      sinks: {
        ...NO_HANDOVER_RELEASE,
        ...workflowSpanSinks(new SimpleSpanProcessor(exporter), new Resource({ 'service.name': 'test' })),
      },
    });
    const workflowId = `txn/iss_trace/${randomUUID()}`;
    await worker.runUntil(() => drive(taskQueue, workflowId));
    const spans = exporter.getFinishedSpans();
    const named = (name: string): ReadableSpan => {
      const found = spans.find((s) => s.name === name);
      assert.ok(found, `${name} among ${spans.map((s) => s.name).join(', ')}`);
      return found;
    };
    return { spans, named, received, receivedBy, workflowId };
  }

  /** One settled purchase through the lifecycle. */
  function settle(traceparent: string | undefined) {
    return traced(async (taskQueue, workflowId) => {
      const handle = await clientSending(env, traceparent).signalWithStart(transactionLifecycle, {
        workflowId,
        taskQueue,
        args: [lifecycleInput('iss_trace', 3 * 24 * 3_600_000)],
        signal: settlementSignal,
        signalArgs: [{ eventId: 's1' }],
      });
      await handle.result();
    });
  }

  it('records the workflow, its signal and its activity in the sender trace, and hands the activity its parent', async () => {
    const { spans, named, received, workflowId } = await settle(`00-${TRACE_ID}-${PARENT_ID}-01`);
    const run = named('RunWorkflow:transactionLifecycle');
    const signal = named('HandleSignal:settlement');
    const start = named('StartActivity:settleTransaction');
    for (const span of spans) assert.equal(span.spanContext().traceId, TRACE_ID, span.name);
    assert.equal(run.parentSpanId, PARENT_ID);
    // SignalWithStart carries one header, the start's: the signal's span hangs under the workflow's.
    assert.equal(signal.parentSpanId, run.spanContext().spanId);
    assert.equal(start.parentSpanId, run.spanContext().spanId);
    assert.equal(run.attributes.temporalWorkflowId, workflowId);
    assert.ok(run.endTime[0] * 1e3 >= run.startTime[0] * 1e3, 'ended after it started');
    assert.deepEqual(
      received.map((t) => parseTraceparent(t)),
      [{ traceId: TRACE_ID, spanId: start.spanContext().spanId, sampled: true }],
    );
  });

  it('records the steps a signal from another trace brings in that trace, the signal and the workflow linked', async () => {
    const SETTLEMENT_TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
    const SETTLEMENT_PARENT_ID = 'b7ad6b7169203331';
    const { named, receivedBy } = await traced(async (taskQueue, workflowId) => {
      const handle = await clientSending(env, `00-${TRACE_ID}-${PARENT_ID}-01`).signalWithStart(transactionLifecycle, {
        workflowId,
        taskQueue,
        args: [lifecycleInput('iss_trace', 3 * 24 * 3_600_000)],
        signal: authorizationSignal,
        signalArgs: [{ eventId: 'a1' }],
      });
      // The settlement comes later, as it does: once the authorization's step is recorded.
      for (let polls = 0; ; polls++) {
        const { events } = await handle.fetchHistory();
        if (events?.some((e) => e.markerRecordedEventAttributes)) break;
        assert.ok(polls < 100, 'the preview step was recorded');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const settlement = clientSending(env, `00-${SETTLEMENT_TRACE_ID}-${SETTLEMENT_PARENT_ID}-01`).getHandle(
        workflowId,
      );
      await settlement.signal(settlementSignal, { eventId: 's1' });
      await handle.result();
    });
    const run = named('RunWorkflow:transactionLifecycle');
    const preview = named('StartActivity:previewAuthorization');
    const signal = named('HandleSignal:settlement');
    const settle = named('StartActivity:settleTransaction');
    // The authorization's step stays in the workflow's trace, under its span.
    assert.equal(preview.spanContext().traceId, TRACE_ID);
    assert.equal(preview.parentSpanId, run.spanContext().spanId);
    // The settlement's signal and step are in the settlement's trace, the step under the signal.
    assert.equal(signal.spanContext().traceId, SETTLEMENT_TRACE_ID);
    assert.equal(signal.parentSpanId, SETTLEMENT_PARENT_ID);
    assert.equal(settle.spanContext().traceId, SETTLEMENT_TRACE_ID);
    assert.equal(settle.parentSpanId, signal.spanContext().spanId);
    assert.deepEqual(parseTraceparent(receivedBy.settleTransaction), {
      traceId: SETTLEMENT_TRACE_ID,
      spanId: settle.spanContext().spanId,
      sampled: true,
    });
    // Each trace leads to the other.
    const context = (s: ReadableSpan) => ({ traceId: s.spanContext().traceId, spanId: s.spanContext().spanId });
    assert.deepEqual(
      signal.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId })),
      [context(run)],
    );
    assert.deepEqual(
      run.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId })),
      [context(signal)],
    );
  });

  it('records nothing for a trace that is not sampled, and passes that decision on to the activity', async () => {
    const { spans, received } = await settle(`00-${TRACE_ID}-${PARENT_ID}-00`);
    assert.deepEqual(spans, []);
    assert.equal(received.length, 1);
    assert.equal(parseTraceparent(received[0])?.sampled, false);
    assert.equal(parseTraceparent(received[0])?.traceId, TRACE_ID);
  });

  it('records nothing for a workflow started without trace context (a schedule), nor hands any on', async () => {
    const { spans, received } = await settle(undefined);
    assert.deepEqual(spans, []);
    assert.deepEqual(received, [undefined]);
  });
});
