// OpenTelemetry traces (DESIGN.md, Observability): one trace per purchase, from the HTTP request
// that stored it through the hand-over, the workflow, its activities and their SQL, to each
// webhook attempt; a later request that moves the purchase (a settlement after its authorization)
// has the work it brings in its own trace, linked both ways with the workflow's
// (workflows/tracing-interceptors.ts). Exported over OTLP when the standard variables ask for it
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; OTEL_EXPORTER_OTLP_PROTOCOL
// http/protobuf by default or http/json; OTEL_TRACES_SAMPLER and its argument; OTEL_SERVICE_NAME;
// OTEL_SDK_DISABLED). Otherwise nothing is started: the API's spans are the no-op ones of
// @opentelemetry/api, PostgreSQL is not patched, and the worker runs the workflow bundle
// without the tracing interceptors.
import {
  context,
  INVALID_SPAN_CONTEXT,
  propagation,
  trace,
  type Context,
  type Span,
  SpanKind,
  SpanStatusCode,
} from '@opentelemetry/api';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry/lib/client';
import type { ClientOptions } from '@temporalio/client';
import { traceSql } from './sql-spans';

export const TRACER_NAME = 'issuer-rewards-service';

export interface Tracing {
  /** Spans are recorded and exported (else every call here is a cheap no-op). */
  readonly enabled: boolean;
  /** For the worker's workflow span sink (the Temporal interceptors' exporter). */
  readonly spanProcessor?: SpanProcessor;
  readonly resource?: Resource;
  /** Flushes what is buffered and stops; PostgreSQL is unpatched. */
  shutdown(): Promise<void>;
}

const DISABLED: Tracing = { enabled: false, shutdown: async () => undefined };
const NOOP_SPAN = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

// Whether this process records spans: the hot paths (a webhook attempt, a hand-over) skip even
// the no-op API's calls without it.
let active = false;

export function tracingActive(): boolean {
  return active;
}

/** Whether the environment asks for traces to be exported. */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT);
}

/** The OTLP exporter the environment names; gRPC is not shipped (the collector's HTTP port takes both encodings). */
export function otlpExporter(env: NodeJS.ProcessEnv = process.env): SpanExporter {
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
  // The exporters read their endpoint, headers and timeout from the same variables.
  if (protocol === 'http/json') {
    const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter();
  }
  if (protocol === 'http/protobuf') {
    const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto');
    return new OTLPTraceExporter();
  }
  throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL ${protocol} is not supported: use http/protobuf or http/json`);
}

/**
 * Starts tracing for this process when the environment asks for it, or with `processor` (tests:
 * an in-memory exporter). PostgreSQL's client is wrapped here (core/sql-spans.ts), on the
 * prototype every client shares, so clients made before are traced too.
 */
export function startTracing(
  serviceName: string,
  options: { env?: NodeJS.ProcessEnv; processor?: SpanProcessor } = {},
): Tracing {
  const env = options.env ?? process.env;
  if (!options.processor && !tracingRequested(env)) return DISABLED;
  const resource = new Resource({ 'service.name': env.OTEL_SERVICE_NAME ?? serviceName });
  const spanProcessor = options.processor ?? new BatchSpanProcessor(otlpExporter(env));
  // The sampler comes from OTEL_TRACES_SAMPLER (parentbased_always_on by default).
  const provider = new NodeTracerProvider({ resource });
  provider.addSpanProcessor(spanProcessor);
  provider.register();
  const untraceSql = traceSql(provider.getTracer(TRACER_NAME));
  active = true;
  return {
    enabled: true,
    spanProcessor,
    resource,
    async shutdown() {
      active = false;
      untraceSql();
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

export const tracer = () => trace.getTracer(TRACER_NAME);

/** Runs `fn` in a span of its own (ended, and marked failed when it throws), as a child of the active one. */
export async function inSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Record<string, string | number | boolean>; parent?: Context },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  if (!active) return fn(NOOP_SPAN);
  return tracer().startActiveSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes },
    options.parent ?? context.active(),
    async (span) => {
      try {
        return await fn(span);
      } catch (err) {
        span.recordException(err as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
        throw err;
      } finally {
        span.end();
      }
    },
  );
}

/** The active span's context as a W3C traceparent, to keep with a row another process picks up; null when none is recorded. */
export function currentTraceparent(): string | null {
  if (!active || !trace.getSpan(context.active())?.isRecording()) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/** The context a stored traceparent names (the active one when there is none). */
export function contextOf(traceparent: string | null | undefined): Context {
  if (!active || !traceparent) return context.active();
  return propagation.extract(context.active(), { traceparent });
}

/** Runs `fn` as part of the trace a stored traceparent names (as it is, when none or not tracing). */
export function withTraceparent<T>(traceparent: string | null | undefined, fn: () => T): T {
  if (!active || !traceparent) return fn();
  return context.with(contextOf(traceparent), fn);
}

/** A Temporal client's interceptors: trace context into start, signal and update headers; none without tracing. */
export function clientInterceptors(tracing: Tracing): Pick<ClientOptions, 'interceptors'> {
  return tracing.enabled ? { interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } } : {};
}
