// The declared routes with their path parameters filled in, for tests that sweep every route.
import { randomUUID } from 'node:crypto';
import { allRoutes } from '../../api/app';
import type { RouteSpec } from '../../api/route';
import type { AppDeps } from '../../api/deps';

export function declaredRoutes(): RouteSpec[] {
  // Route declarations only need deps when handling; a placeholder is enough to list them.
  return allRoutes({} as AppDeps);
}

export function fillPath(route: RouteSpec, values: Record<string, string> = {}): string {
  return route.path.replace(
    /\{(\w+)\}/g,
    (_, name: string) => values[name] ?? `${prefixOf(route.params?.[name])}_${randomUUID()}`,
  );
}

/** A typed id's prefix (the first of several); 'x' for a parameter that is no typed id. */
function prefixOf(param: NonNullable<RouteSpec['params']>[string] | undefined): string {
  if (param === undefined || (typeof param === 'object' && !Array.isArray(param))) return 'x';
  return typeof param === 'string' ? param : (param as readonly string[])[0];
}
