// W3C trace context as the workflows carry it: in the `_tracer-data` header that OpenTelemetry's
// Temporal interceptors use (a JSON payload holding { traceparent }), so the client interceptor
// that starts and signals workflows and the activity interceptor that runs activities read and
// write the same thing the workflow side does. Plain functions, no OpenTelemetry in the sandbox.

/** Where the Temporal OpenTelemetry interceptors keep trace context in headers. */
export const TRACE_HEADER = '_tracer-data';

export interface SpanContext {
  /** 32 lowercase hex digits. */
  traceId: string;
  /** 16 lowercase hex digits. */
  spanId: string;
  /** Whether the trace is recorded (the sampled flag). */
  sampled: boolean;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ALL_ZEROS = /^0+$/;

/** A traceparent's context, or undefined for anything that is not a valid version-00 one. */
export function parseTraceparent(value: unknown): SpanContext | undefined {
  if (typeof value !== 'string') return undefined;
  const m = TRACEPARENT.exec(value);
  if (!m || ALL_ZEROS.test(m[1]) || ALL_ZEROS.test(m[2])) return undefined;
  return { traceId: m[1], spanId: m[2], sampled: (parseInt(m[3], 16) & 1) === 1 };
}

export function formatTraceparent(context: SpanContext): string {
  return `00-${context.traceId}-${context.spanId}-${context.sampled ? '01' : '00'}`;
}

/**
 * A span id from `random` (in a workflow, its seeded Math.random: the same ids again on replay,
 * so what was handed to activities before an eviction still names the same spans).
 */
export function newSpanId(random: () => number = Math.random): string {
  let id = '';
  while (id.length < 16)
    id += Math.floor(random() * 0x100000000)
      .toString(16)
      .padStart(8, '0');
  return ALL_ZEROS.test(id) ? '0000000000000001' : id;
}
