// One structured log line per request, after the response is decided. Written through the
// process's logger with the request's ids as fields, not through the request's child logger:
// making that child (and the issuer's below it) costs more than writing the line itself, paid on
// every request at thousands of requests a second.
import type { Middleware } from 'koa';
import type { Logger } from '../../core/logger';
import { redactCardNumbers } from '../../core/rules/card-numbers';

export function accessLog(logger: Logger): Middleware {
  return async (ctx, next) => {
    if (!logger.isLevelEnabled('info')) return next();
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      logger.info(
        {
          requestId: ctx.state.requestId,
          issuerId: (ctx.state.issuer as { id?: string } | undefined)?.id,
          method: ctx.method,
          // A path can carry anything a caller typed, a card number too (refused, never written).
          path: redactCardNumbers(ctx.path),
          route: ctx._matchedRoute,
          status: ctx.status,
          ms: Math.round(ms * 10) / 10,
        },
        'request',
      );
    }
  };
}
