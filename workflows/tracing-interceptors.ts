// The workflows' side of tracing, bundled only into the traced workflow bundle (worker/tracing.ts).
// A workflow started or signalled with trace context in its headers (the API's hand-over, the
// sweeper, the relay: core/tracing.ts) records RunWorkflow, HandleSignal, HandleUpdate and
// StartActivity spans in that trace and hands its activities their parent in their headers,
// where the activity interceptor on the worker finds it.
//
// Written here rather than taken from @temporalio/interceptors-opentelemetry's workflow module:
// that one loads OpenTelemetry's SDK into the sandbox, and the sandbox runs a bundle's module
// initialisers again for every workflow, which made tracing cost a quarter of the lifecycle's
// throughput. Here a span is a plain object handed, once ended, to the worker through a sink
// (not called on replay), which turns it into an OpenTelemetry span (worker/workflow-spans.ts).
// Span ids come from the workflow's seeded Math.random, so a replay names the same spans.
// A workflow with no trace context (a schedule's) records nothing: its activities start their
// own traces, as the sampler decides.
//
// A purchase is often more than one request: an authorization starts its workflow, and its
// settlement (or reversal, refund, an operator's reprocess) arrives later as a signal from another
// request, in another trace. The steps a signal brings (the activities whose input names the
// signal's `eventId`) go in that request's trace, under the span that handled the signal, so the
// operator following the settlement's request finds its posting, its SQL and its webhook; the
// signal's span and the workflow's span link to each other, so either trace leads to the other
// (docs/decisions/0036-a-signal-s-work-in-its-request-s-trace.md).
import {
  ContinueAsNew,
  defaultPayloadConverter,
  proxySinks,
  workflowInfo,
  type ActivityInput,
  type ContinueAsNewInput,
  type Headers,
  type LocalActivityInput,
  type Next,
  type SignalInput,
  type Sinks,
  type UpdateInput,
  type WorkflowExecuteInput,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptorsFactory,
  type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import { formatTraceparent, newSpanId, parseTraceparent, TRACE_HEADER, type SpanContext } from './trace-context';

/** A workflow span as it crosses to the worker: OpenTelemetry's SpanKind numbers, epoch milliseconds. */
export interface EndedWorkflowSpan {
  name: string;
  /** 0 internal, 1 server, 2 client (OpenTelemetry's SpanKind). */
  kind: 0 | 1 | 2;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  startMs: number;
  endMs: number;
  /** The error's message when the call failed. */
  error?: string;
  /** Spans of other traces this one is related to (the workflow's and the signals' of other requests). */
  links?: SpanLink[];
}

export interface SpanLink {
  traceId: string;
  spanId: string;
}

export interface WorkflowSpanSinks extends Sinks {
  workflowSpans: { ended(span: EndedWorkflowSpan): void };
}

const SERVER = 1;
const CLIENT = 2;

const sinks = proxySinks<WorkflowSpanSinks>();

// Module state is the workflow's own: the sandbox gives every workflow fresh module instances.
let workflowSpan: SpanContext | undefined;
/** The span that handled the signal bringing each event, for signals from another trace than the workflow's. */
const eventSpans = new Map<string, SpanContext>();
/** Those signals' spans, which the workflow's span links to: at most MAX_LINKS (a purchase has a few). */
const signalLinks: SpanLink[] = [];
const MAX_LINKS = 32;

/** The event a signal carries or a step works on: the lifecycle's signals and steps name it `eventId`. */
function eventIdOf(args: unknown[]): string | undefined {
  const first = args[0];
  if (typeof first !== 'object' || first === null) return undefined;
  const eventId = (first as { eventId?: unknown }).eventId;
  return typeof eventId === 'string' ? eventId : undefined;
}

/** Whether `span` belongs to another trace than the workflow's (or the workflow has none). */
function otherTrace(span: SpanContext | undefined): span is SpanContext {
  return span !== undefined && span.traceId !== workflowSpan?.traceId;
}

/** Where a step starts: under the span of the signal that brought its event from another request, else the workflow's. */
function stepParent(args: unknown[]): SpanContext | undefined {
  const eventId = eventIdOf(args);
  return (eventId === undefined ? undefined : eventSpans.get(eventId)) ?? workflowSpan;
}

function contextIn(headers: Headers): SpanContext | undefined {
  const payload = headers[TRACE_HEADER];
  if (!payload) return undefined;
  try {
    return parseTraceparent(defaultPayloadConverter.fromPayload<{ traceparent?: unknown }>(payload)?.traceparent);
  } catch {
    return undefined;
  }
}

function withContext(headers: Headers, context: SpanContext): Headers {
  return { ...headers, [TRACE_HEADER]: defaultPayloadConverter.toPayload({ traceparent: formatTraceparent(context) }) };
}

/**
 * Runs `fn` in a child span of `parent` (nothing recorded without one, or when not sampled). The
 * span's links are read when it ends, so `fn` may add to them.
 */
async function inSpan<T>(
  name: string,
  kind: EndedWorkflowSpan['kind'],
  parent: SpanContext | undefined,
  fn: (span: SpanContext | undefined) => Promise<T>,
  links: readonly SpanLink[] = [],
): Promise<T> {
  if (!parent) return fn(undefined);
  const span: SpanContext = { traceId: parent.traceId, spanId: newSpanId(), sampled: parent.sampled };
  const startMs = Date.now(); // workflow time: the same on replay
  let error: string | undefined;
  try {
    return await fn(span);
  } catch (err) {
    if (!(err instanceof ContinueAsNew)) error = err instanceof Error ? err.message : String(err);
    throw err;
  } finally {
    if (span.sampled)
      sinks.workflowSpans.ended({
        name,
        kind,
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: parent.spanId,
        startMs,
        endMs: Date.now(), // workflow time
        ...(error === undefined ? {} : { error }),
        ...(links.length === 0 ? {} : { links: links.map(({ traceId, spanId }) => ({ traceId, spanId })) }),
      });
  }
}

class Inbound implements WorkflowInboundCallsInterceptor {
  execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    return inSpan(
      `RunWorkflow:${workflowInfo().workflowType}`,
      SERVER,
      contextIn(input.headers),
      (span) => {
        workflowSpan = span;
        return next(input);
      },
      signalLinks,
    );
  }

  /**
   * A signal sent from another request's trace is handled in that trace (the span links to the
   * workflow's), and the steps of the event it brings follow it there.
   */
  handleSignal(input: SignalInput, next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>): Promise<void> {
    const sent = contextIn(input.headers);
    const fromOtherTrace = otherTrace(sent);
    return inSpan(
      `HandleSignal:${input.signalName}`,
      SERVER,
      sent ?? workflowSpan,
      (span) => {
        const eventId = eventIdOf(input.args);
        if (fromOtherTrace && span) {
          if (eventId !== undefined) eventSpans.set(eventId, span);
          if (span.sampled && signalLinks.length < MAX_LINKS) signalLinks.push(span);
        }
        return next(input);
      },
      fromOtherTrace && workflowSpan?.sampled ? [workflowSpan] : [],
    );
  }

  handleUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>): Promise<unknown> {
    return inSpan(`HandleUpdate:${input.name}`, SERVER, contextIn(input.headers) ?? workflowSpan, () => next(input));
  }
}

/**
 * Activities are children of the workflow's span, but a step of an event that a signal brought from
 * another request's trace is a child of that signal's span (stepParent).
 */
class Outbound implements WorkflowOutboundCallsInterceptor {
  scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>) {
    return inSpan(`StartActivity:${input.activityType}`, CLIENT, stepParent(input.args), (span) =>
      next(span ? { ...input, headers: withContext(input.headers, span) } : input),
    );
  }

  scheduleLocalActivity(
    input: LocalActivityInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>,
  ) {
    return inSpan(`StartActivity:${input.activityType}`, CLIENT, stepParent(input.args), (span) =>
      next(span ? { ...input, headers: withContext(input.headers, span) } : input),
    );
  }

  continueAsNew(input: ContinueAsNewInput, next: Next<WorkflowOutboundCallsInterceptor, 'continueAsNew'>) {
    return next(workflowSpan ? { ...input, headers: withContext(input.headers, workflowSpan) } : input);
  }
}

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [new Inbound()],
  outbound: [new Outbound()],
});
