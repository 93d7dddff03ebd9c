// The worker's side of tracing with Temporal (core/tracing.ts; the client's interceptor is
// core/tracing.ts's clientInterceptors): our workflow interceptors (workflows/tracing-interceptors.ts,
// their spans handed over through a sink, worker/workflow-spans.ts) and OpenTelemetry's activity
// interceptors (a span per execution, the parent taken from the headers). Installed only when the
// process traces, so a worker without OTEL_* runs the workflow bundle without them.
import {
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/worker';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import type { Tracing } from '../core/tracing';
import { workflowSpanSinks } from './workflow-spans';

/** The workflow interceptors' module, bundled with the workflows when tracing. */
export const WORKFLOW_TRACING_MODULE = require.resolve('../workflows/tracing-interceptors');

/** What Worker.create adds for tracing: activity interceptors and the workflow span sink. */
export function workerTracing(tracing: Tracing): {
  activity: ActivityInterceptorsFactory[];
  sinks?: InjectedSinks<never>;
  workflowModules: string[];
} {
  if (!tracing.enabled || !tracing.spanProcessor || !tracing.resource) return { activity: [], workflowModules: [] };
  return {
    activity: [
      (ctx) => ({
        inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
        outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
      }),
    ],
    sinks: workflowSpanSinks(tracing.spanProcessor, tracing.resource) as InjectedSinks<never>,
    workflowModules: [WORKFLOW_TRACING_MODULE],
  };
}
