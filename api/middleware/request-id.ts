// Every response carries X-Request-Id: the caller's when it is a sane token, else ours.
import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../../core/logger';

const CALLER_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestId(logger: Logger): Middleware {
  return async (ctx, next) => {
    const given = ctx.get('X-Request-Id');
    const id = CALLER_ID.test(given) ? given : `req_${randomUUID()}`;
    ctx.state.requestId = id;
    ctx.state.log = logger.child({ requestId: id });
    ctx.set('X-Request-Id', id);
    await next();
  };
}
