// Every response carries X-Request-Id: the caller's when it is a sane token, else ours.
// ctx.state.log is the request's logger (request id, then the issuer once authenticated),
// made when first used: most requests log nothing, or only at a level that is off, and a
// child logger per request is measurable at thousands of requests a second.
import { randomUUID } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import type { Logger } from '../../core/logger';
import { holdsCardNumber } from '../../core/rules/card-numbers';

/** A caller's request id we echo; any other value is replaced (published in /openapi.json). */
export const CALLER_REQUEST_ID_PATTERN = '^[A-Za-z0-9._:-]{1,128}$';
const CALLER_ID = new RegExp(CALLER_REQUEST_ID_PATTERN);

export function requestId(logger: Logger): Middleware {
  return async (ctx, next) => {
    const given = ctx.get('X-Request-Id');
    // A caller's id is logged and echoed: one holding a card number is replaced like any other unfit one.
    const id = CALLER_ID.test(given) && !holdsCardNumber(given) ? given : `req_${randomUUID()}`;
    ctx.state.requestId = id;
    lazyLog(ctx, () => logger.child({ requestId: id }));
    ctx.set('X-Request-Id', id);
    await next();
  };
}

/** Adds fields to the request's logger from now on (still made only when used). */
export function addLogContext(ctx: Context, fields: Record<string, unknown>): void {
  const parent = Object.getOwnPropertyDescriptor(ctx.state, 'log')?.get;
  lazyLog(ctx, () => (parent ? (parent() as Logger).child(fields) : undefined));
}

function lazyLog(ctx: Context, make: () => Logger | undefined): void {
  let log: Logger | undefined;
  Object.defineProperty(ctx.state, 'log', { get: () => (log ??= make()), configurable: true, enumerable: true });
}
