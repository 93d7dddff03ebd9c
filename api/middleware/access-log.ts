// One structured log line per request, after the response is decided.
import type { Middleware } from 'koa';
import type { Logger } from '../../core/logger';

export function accessLog(logger: Logger): Middleware {
  return async (ctx, next) => {
    if (!logger.isLevelEnabled('info')) return next();
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      ctx.state.log?.info(
        {
          method: ctx.method,
          path: ctx.path,
          route: ctx._matchedRoute,
          status: ctx.status,
          ms: Math.round(ms * 10) / 10,
        },
        'request',
      );
    }
  };
}
