// The worker's end of the workflows' span sink (workflows/tracing-interceptors.ts): each span a
// workflow ended becomes an OpenTelemetry span, with the workflow's id and run id, and goes to
// the process's span processor with the worker's own spans.
import { SpanKind, SpanStatusCode, TraceFlags, type HrTime } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { InjectedSinks } from '@temporalio/worker';
import type { WorkflowInfo } from '@temporalio/workflow';
import type { EndedWorkflowSpan, WorkflowSpanSinks } from '../workflows/tracing-interceptors';
import { TRACER_NAME } from '../core/tracing';

/** The attribute names @temporalio/interceptors-opentelemetry gives its activity spans, for one vocabulary. */
export const WORKFLOW_ID_ATTRIBUTE = 'temporalWorkflowId';
export const RUN_ID_ATTRIBUTE = 'run_id';

export function workflowSpanSinks(processor: SpanProcessor, resource: Resource): InjectedSinks<WorkflowSpanSinks> {
  return {
    workflowSpans: {
      ended: {
        fn: (info: WorkflowInfo, span: EndedWorkflowSpan) => processor.onEnd(readableSpan(info, span, resource)),
        // A replay ends the spans its first run exported already.
        callDuringReplay: false,
      },
    },
  };
}

export function readableSpan(info: WorkflowInfo, span: EndedWorkflowSpan, resource: Resource): ReadableSpan {
  const spanContext = { traceId: span.traceId, spanId: span.spanId, traceFlags: TraceFlags.SAMPLED, isRemote: false };
  const startTime = hrTime(span.startMs);
  const endTime = hrTime(span.endMs);
  return {
    name: span.name,
    kind: span.kind as SpanKind,
    spanContext: () => spanContext,
    parentSpanId: span.parentSpanId,
    startTime,
    endTime,
    duration: hrTime(span.endMs - span.startMs),
    status:
      span.error === undefined ? { code: SpanStatusCode.UNSET } : { code: SpanStatusCode.ERROR, message: span.error },
    attributes: {
      [WORKFLOW_ID_ATTRIBUTE]: info.workflowId,
      [RUN_ID_ATTRIBUTE]: info.runId,
      'temporal.workflow.type': info.workflowType,
    },
    links: (span.links ?? []).map((link) => ({
      context: { traceId: link.traceId, spanId: link.spanId, traceFlags: TraceFlags.SAMPLED, isRemote: true },
    })),
    events: [],
    ended: true,
    resource,
    instrumentationLibrary: { name: TRACER_NAME },
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

function hrTime(ms: number): HrTime {
  const whole = Math.floor(ms);
  return [Math.floor(whole / 1000), (whole % 1000) * 1_000_000];
}
