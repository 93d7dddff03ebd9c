// The one place that turns failures into API.md's error object. 4xx messages are meant
// for the caller; anything unexpected becomes a 500 whose body says nothing internal and
// whose uuid ties it to the log line holding the real cause.
import type { Context, Middleware } from 'koa';
import { ApiError, errors } from '../../core/errors';
import { newId } from '../../core/ids';
import { classifyFailure } from '../../core/failures';
import type { Logger } from '../../core/logger';
import { redactCardNumbers } from '../../core/rules/card-numbers';

export function errorHandler(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw errors.notFound('route_not_found', `No route ${ctx.method} ${redactCardNumbers(ctx.path)}.`);
      }
    } catch (err) {
      renderError(ctx, err);
    }
  };
}

/**
 * Logs a failure and makes it the response. The Idempotency-Key layer also calls it, for the
 * 4xx answers it stores (api/middleware/idempotency.ts).
 */
export function renderError(ctx: Context, err: unknown): void {
  const apiError = toApiError(err);
  const uuid = newId('err');
  const log: Logger | undefined = ctx.state.log;
  if (apiError.status >= 500) {
    log?.error({ err, errorId: uuid, status: apiError.status }, 'request failed');
  } else {
    log?.info({ errorId: uuid, status: apiError.status, reasonCode: apiError.reasonCode }, 'request rejected');
  }
  ctx.status = apiError.status;
  for (const [name, value] of Object.entries(apiError.headers)) ctx.set(name, value);
  ctx.body = apiError.toBody(uuid);
}

function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const kind = classifyFailure(err);
  if (kind === 'database_unavailable') {
    return errors.unavailable('database_unavailable', 'The database is unreachable; retry shortly.');
  }
  if (kind === 'statement_timeout') {
    return errors.unavailable(
      'database_unavailable',
      'The database did not finish this request within its statement time-out; retry shortly.',
    );
  }
  if (kind === 'workflow_engine_unavailable') {
    return errors.unavailable('workflow_engine_unavailable', 'The workflow engine is unreachable; retry shortly.');
  }
  return errors.internal();
}
