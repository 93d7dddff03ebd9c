// createApp(deps) builds the Koa application; api/server.ts listens. Middleware runs top
// down: request id → access log → metrics → errors → body → 405 with Allow → routes. Within a route
// (api/route.ts): auth guard → role (operator routes) → rate limit → input validation → Idempotency-Key →
// handler.
import { tracingActive } from '../core/tracing';
import { requestSpans } from './middleware/tracing';
import Koa from 'koa';
import Router from '@koa/router';
import type { AppDeps } from './deps';
import type { RouteSpec } from './route';
import { mountRoutes } from './route';
import { requestId } from './middleware/request-id';
import { accessLog } from './middleware/access-log';
import { errorHandler } from './middleware/error-handler';
import { jsonBody } from './middleware/json-body';
import { methodNotAllowed } from './middleware/method-not-allowed';
import { requestMetrics } from './middleware/metrics';
import { createGuards } from './middleware/auth';
import { createAuditCall } from './audit/operator-calls';
import { createIdempotency } from './middleware/idempotency';
import { buildOpenApi } from './openapi';
import { healthRoutes } from './health/routes';
import { chgRoutes } from './chg/routes';
import { issuerAdminRoutes } from './issuers/admin-routes';
import { operatorAdminRoutes } from './operators/admin-routes';
import { auditAdminRoutes } from './audit/admin-routes';
import { approvalAdminRoutes } from './approvals/admin-routes';
import { createApprovalGate } from './approvals/gate';
import { ingestionRoutes } from './ingestion/routes';
import { catalogueAdminRoutes } from './catalogue/admin-routes';
import { catalogueRoutes } from './catalogue/routes';
import { impressionRoutes } from './impressions/routes';
import { liftAdminRoutes } from './lift/admin-routes';
import { activationRoutes } from './activations/routes';
import { eligibilityRoutes } from './eligibility/routes';
import { ledgerAdminRoutes } from './ledger/admin-routes';
import { operationsAdminRoutes } from './operations/admin-routes';
import { transactionRoutes } from './rewards/routes';
import { balanceRoutes } from './balances/routes';
import { exportRoutes } from './exports/routes';
import { webhookRoutes } from './webhooks/routes';
import { webhookEndpointRoutes } from './webhook-endpoints/routes';
import { adjustmentRoutes } from './adjustments/routes';
import { claimRoutes } from './claims/routes';
import { claimAdminRoutes } from './claims/admin-routes';
import { statementAdminRoutes } from './statements/admin-routes';
import { payoutRoutes } from './payouts/routes';
import { webhookAdminRoutes } from './webhooks/admin-routes';
import { sandboxRoutes } from './sandbox/routes';
import { docsRoutes } from './docs/routes';
import { mountDocsAssets } from './docs/assets';
import { consoleRoutes } from './console/routes';
import { mountConsoleAssets } from './console/assets';

export const API_VERSION = '2.0.0';

export function allRoutes(deps: AppDeps): RouteSpec[] {
  const routes: RouteSpec[] = [];
  // The webhook section states the retry schedule, and the info the rate limits, this deployment runs with.
  const openApi = () =>
    buildOpenApi(routes, API_VERSION, {
      webhookRetryScheduleMs: deps.temporal?.settings.webhookRetryScheduleMs,
      rateLimits: deps.rateLimiter?.settings,
    });
  routes.push(
    ...healthRoutes(deps, openApi),
    ...docsRoutes(),
    ...consoleRoutes(),
    ...chgRoutes(deps),
    ...catalogueRoutes(deps),
    ...impressionRoutes(deps),
    ...activationRoutes(deps),
    ...eligibilityRoutes(deps),
    ...ingestionRoutes(deps),
    ...transactionRoutes(deps),
    ...balanceRoutes(deps),
    ...exportRoutes(deps),
    ...adjustmentRoutes(deps),
    ...claimRoutes(deps),
    ...payoutRoutes(deps),
    ...webhookEndpointRoutes(deps),
    ...webhookRoutes(deps),
    ...sandboxRoutes(deps),
    ...operatorAdminRoutes(deps),
    ...issuerAdminRoutes(deps),
    ...auditAdminRoutes(deps),
    ...approvalAdminRoutes(deps),
    ...catalogueAdminRoutes(deps),
    ...liftAdminRoutes(deps),
    ...ledgerAdminRoutes(deps),
    ...operationsAdminRoutes(deps),
    ...webhookAdminRoutes(deps),
    ...claimAdminRoutes(deps),
    ...statementAdminRoutes(deps),
  );
  return routes;
}

export function createApp(deps: AppDeps): Koa {
  const app = new Koa();
  app.proxy = true;
  // Errors are logged by errorHandler with their request id; silence Koa's own printing.
  app.silent = true;
  const router = new Router();
  const idempotency = createIdempotency({ db: deps.db, logger: deps.logger });
  const guards = createGuards({ db: deps.db, operatorToken: deps.config.operatorToken, tokenCache: deps.tokenCache });
  const limiter = deps.rateLimiter;
  const routes = allRoutes(deps);
  mountRoutes(router, routes, guards, idempotency, {
    rateLimit: limiter ? (ctx, route) => limiter.check(ctx, route) : undefined,
    auditCall: createAuditCall(deps.db, deps.clock),
    approvalGate: createApprovalGate(deps.db, deps.clock),
  });
  mountDocsAssets(router);
  mountConsoleAssets(router);
  if (tracingActive()) app.use(requestSpans());
  app.use(requestId(deps.logger));
  app.use(accessLog(deps.logger));
  app.use(requestMetrics());
  app.use(errorHandler());
  app.use(jsonBody({ screensItemsAlone: itemValidatedPaths(routes) }));
  app.use(methodNotAllowed(router));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

/** Routes whose items fail alone (ingestion) screen each item on its own. */
function itemValidatedPaths(routes: RouteSpec[]): Set<string> {
  return new Set(routes.filter((r) => r.itemsFailAlone).map((r) => r.path));
}
