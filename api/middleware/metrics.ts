// Counts and times every request by its route template (not its raw path, which would
// give one time series per id).
import type { Middleware } from 'koa';
import { httpDuration, httpRequests } from '../../core/metrics';

export function requestMetrics(): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const labels = {
        method: ctx.method,
        route: ctx._matchedRoute ? String(ctx._matchedRoute) : 'unmatched',
        status: String(ctx.status),
      };
      httpRequests.inc(labels);
      httpDuration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    }
  };
}
