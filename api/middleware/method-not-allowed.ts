// Which methods a path takes, answered before routing: OPTIONS gets them in `Allow`, and a
// method the path does not take gets 405 with `Allow` (RFC 9110, 15.5.6), methods the router
// does not know at all (TRACE, CONNECT) included. Where a literal path and a parameterised one
// both match (/api/v2/chg/bulk-upsert and /api/v2/chg/{chgId}), the literal one is the resource:
// its methods alone are allowed, so GET /api/v2/chg/bulk-upsert is a 405, not a malformed chgId.
import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { ApiError } from '../../core/errors';

export function methodNotAllowed(router: Router): Middleware {
  return async (ctx, next) => {
    const allowed = allowedMethods(router, ctx.path);
    if (allowed.length === 0 || allowed.includes(ctx.method)) return next();
    const allow = allowed.join(', ');
    if (ctx.method === 'OPTIONS') return answerOptions(ctx, allow);
    throw new ApiError('method_not_allowed', `This route does not take ${ctx.method}; it takes ${allow}.`, {
      reasonCode: 'method_not_allowed',
      headers: { Allow: allow },
    });
  };
}

/** The methods of the most specific routes matching the path (fewest parameters); none for an unknown path. */
function allowedMethods(router: Router, path: string): string[] {
  const layers = router.match(path, 'GET').path.filter((layer) => layer.methods.length > 0);
  if (layers.length === 0) return [];
  const fewest = Math.min(...layers.map((layer) => layer.paramNames.length));
  const methods = layers.filter((layer) => layer.paramNames.length === fewest).flatMap((layer) => layer.methods);
  return [...new Set(methods)];
}

function answerOptions(ctx: Context, allow: string): void {
  ctx.status = 204;
  ctx.set('Allow', allow);
}
