// A method a path does not take is 405 with `Allow` listing the methods it does (RFC 9110,
// 15.5.6), methods the router does not know at all (TRACE, CONNECT) included; OPTIONS gets
// `Allow` too. The router finds them as it routes (allowedMethods, mounted after the routes);
// this middleware, mounted before, turns its bare answer into API.md's error object.
// Where a literal path and a parameterised one both match (/api/v2/chg/bulk-upsert and
// /api/v2/chg/{chgId}), the literal one is the resource: its methods alone are allowed, so
// GET /api/v2/chg/bulk-upsert is a 405 and not a malformed chgId. Only those paths are looked up
// before routing (a set lookup); every other request is routed once, as before.
import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { ApiError } from '../../core/errors';

export function methodNotAllowed(router: Router): Middleware {
  let literals: Map<string, string[]> | undefined;
  return async (ctx, next) => {
    literals ??= literalPaths(router);
    const literal = literals.get(ctx.path);
    if (literal && !literal.includes(ctx.method)) return refuse(ctx, literal.join(', '));
    await next();
    const allow = ctx.response.get('Allow');
    // The router answers OPTIONS 200 with an empty body: 204, as for the literal paths above.
    if (ctx.method === 'OPTIONS' && ctx.status === 200 && allow) ctx.status = 204;
    if ((ctx.status === 405 || ctx.status === 501) && !ctx.body && allow) refuse(ctx, allow);
  };
}

/** The methods of each path that has no parameter, by path. */
function literalPaths(router: Router): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const layer of router.stack) {
    const path = layer.path;
    if (typeof path !== 'string' || layer.methods.length === 0 || layer.paramNames.length > 0) continue;
    out.set(path, [...new Set([...(out.get(path) ?? []), ...layer.methods])]);
  }
  return out;
}

function refuse(ctx: Context, allow: string): void {
  if (ctx.method === 'OPTIONS') {
    ctx.status = 204;
    ctx.set('Allow', allow);
    return;
  }
  throw new ApiError('method_not_allowed', `This route does not take ${ctx.method}; it takes ${allow}.`, {
    reasonCode: 'method_not_allowed',
    headers: { Allow: allow },
  });
}
