// Liveness, readiness and the OpenAPI document: unauthenticated, for load balancers and tools.
import { defineRoute, type RouteSpec } from '../route';
import { errors } from '../../core/errors';
import type { AppDeps } from '../deps';
import { registry } from '../../core/metrics';
import { requireStaticToken } from '../middleware/auth';

export function healthRoutes(deps: AppDeps, openApi: () => object): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/healthz',
      operationId: 'healthz',
      summary: 'The process is up',
      tag: 'Health',
      auth: 'none',
      responses: { 200: { description: 'Up.', schema: { type: 'object', properties: { status: { const: 'ok' } } } } },
      async handle(ctx) {
        ctx.body = { status: 'ok' };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/readyz',
      operationId: 'readyz',
      summary: 'PostgreSQL and Temporal are reachable',
      tag: 'Health',
      auth: 'none',
      responses: { 200: { description: 'Ready.', schema: { type: 'object', properties: { status: { const: 'ready' }, database: { type: 'string' }, temporal: { type: 'string' } } } } },
      errorStatuses: [503],
      async handle(ctx) {
        try {
          await deps.db.$queryRaw`SELECT 1`;
        } catch {
          throw errors.unavailable('database_unavailable', 'The database is unreachable.');
        }
        if (deps.temporalHealth) {
          try {
            await deps.temporalHealth();
          } catch {
            throw errors.unavailable('workflow_engine_unavailable', 'The workflow engine is unreachable.');
          }
        }
        ctx.body = { status: 'ready', database: 'ok', temporal: deps.temporalHealth ? 'ok' : 'not_configured' };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/metrics',
      operationId: 'metrics',
      summary: 'Prometheus metrics of this process (text exposition format)',
      description:
        'With METRICS_TOKEN set, only for `Authorization: Bearer <METRICS_TOKEN>`; without it unauthenticated, like /healthz ' +
        '(then expose it only to the scraping network). The worker serves its own on WORKER_METRICS_PORT.',
      tag: 'Health',
      auth: 'none',
      responses: { 200: { description: 'Prometheus text format.' } },
      errorStatuses: [401],
      async handle(ctx) {
        if (deps.config.metricsToken) requireStaticToken(ctx, deps.config.metricsToken, 'metrics');
        ctx.type = registry.contentType;
        ctx.body = await registry.metrics();
      },
    }),
    defineRoute({
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
    }),
  ];
}
