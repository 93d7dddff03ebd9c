// The server span of every request (core/tracing.ts), mounted only when this process traces: a
// caller's traceparent is its parent, and everything the request does (its SQL, the hand-over it
// queues) happens inside it. Named by the route template once the router has matched it, so
// spans group by operation, not by id.
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Middleware } from 'koa';
import { tracer } from '../../core/tracing';
import { redactCardNumbers } from '../../core/rules/card-numbers';

export function requestSpans(): Middleware {
  return async (ctx, next) => {
    const parent = propagation.extract(context.active(), ctx.headers);
    // The raw path names the span until the route does: a card number in it is not exported.
    const path = redactCardNumbers(ctx.path);
    const span = tracer().startSpan(
      `${ctx.method} ${path}`,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': ctx.method, 'url.path': path } },
      parent,
    );
    try {
      await context.with(trace.setSpan(parent, span), next);
    } finally {
      const route = (ctx as { _matchedRoute?: string })._matchedRoute;
      if (typeof route === 'string') {
        span.updateName(`${ctx.method} ${route}`);
        span.setAttribute('http.route', route);
      }
      span.setAttribute('http.response.status_code', ctx.status);
      if (ctx.state.requestId) span.setAttribute('rewards.request_id', String(ctx.state.requestId));
      if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  };
}
