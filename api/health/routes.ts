// Liveness, readiness and the OpenAPI document: unauthenticated, for load balancers and tools.
import { defineRoute, type RouteSpec } from '../route';
import { errors } from '../../core/errors';
import type { AppDeps } from '../deps';
import { registry } from '../../core/metrics';
import { requireStaticToken } from '../middleware/auth';
import { CHECK_TIMEOUT_MS, checkWithin } from './readiness';
import { named } from '../schemas/named';

export function healthRoutes(deps: AppDeps, openApi: () => object): RouteSpec[] {
  return [healthzRoute(), readyzRoute(deps), metricsRoute(deps), openapiRoute(openApi)];
}

function healthzRoute(): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/healthz',
    operationId: 'healthz',
    summary: 'The process is up',
    tag: 'Health',
    auth: 'none',
    responses: {
      200: {
        description: 'Up.',
        schema: named('Health', { type: 'object', properties: { status: { const: 'ok' } } }, { status: 'ok' }),
      },
    },
    async handle(ctx) {
      ctx.body = { status: 'ok' };
    },
  });
}

function readyzRoute(deps: AppDeps): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/readyz',
    operationId: 'readyz',
    summary: 'PostgreSQL and Temporal are reachable, and the process is not shutting down',
    description:
      `503 \`draining\` as soon as the process starts shutting down; otherwise both dependencies are checked at once, ` +
      `each for at most ${CHECK_TIMEOUT_MS} ms, and a 503 names the one that failed (\`details\`: each check's outcome).`,
    tag: 'Health',
    auth: 'none',
    responses: {
      200: {
        description: 'Ready.',
        schema: named(
          'Readiness',
          {
            type: 'object',
            properties: { status: { const: 'ready' }, database: { type: 'string' }, temporal: { type: 'string' } },
          },
          { status: 'ready', database: 'ok', temporal: 'ok' },
        ),
      },
    },
    errorStatuses: [503],
    async handle(ctx) {
      if (deps.draining?.active)
        throw errors.unavailable('draining', 'This API process is shutting down; send requests to another one.');
      const [database, temporal] = await Promise.all([
        checkWithin(() => deps.db.$queryRaw`SELECT 1`),
        deps.temporalHealth ? checkWithin(deps.temporalHealth) : ('not_configured' as const),
      ]);
      const checks = { database, temporal };
      if (database !== 'ok') throw errors.unavailable('database_unavailable', 'The database is unreachable.', checks);
      if (temporal !== 'ok' && temporal !== 'not_configured') {
        throw errors.unavailable('workflow_engine_unavailable', 'The workflow engine is unreachable.', checks);
      }
      ctx.body = { status: 'ready', database, temporal };
    },
  });
}

function metricsRoute(deps: AppDeps): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/metrics',
    operationId: 'metrics',
    summary: 'Prometheus metrics of this process (text exposition format)',
    description:
      'With METRICS_TOKEN set, only for `Authorization: Bearer <METRICS_TOKEN>`; without it unauthenticated, like /healthz ' +
      '(then expose it only to the scraping network). The worker serves its own on WORKER_METRICS_PORT.',
    tag: 'Health',
    auth: 'none',
    responses: { 200: { description: 'Prometheus text format.', mediaType: 'text/plain' } },
    errorStatuses: [401],
    async handle(ctx) {
      if (deps.config.metricsToken) requireStaticToken(ctx, deps.config.metricsToken, 'metrics');
      ctx.type = registry.contentType;
      ctx.body = await registry.metrics();
    },
  });
}

function openapiRoute(openApi: () => object): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/openapi.json',
    operationId: 'openapi',
    summary: 'This document',
    tag: 'Health',
    auth: 'none',
    responses: { 200: { description: 'OpenAPI 3.1 document.' } },
    async handle(ctx) {
      ctx.body = openApi();
    },
  });
}
