// Operator API (API.md, Operator API): the audit log of operator actions, newest first.
import { defineRoute, type RouteSpec } from '../route';
import { createdAtKey, createdAtKeyset, pageSchema, paginationQueryProperties, toPage } from '../pagination';
import type { AppDeps } from '../deps';
import { auditEntrySchema } from './schemas';

const tag = 'Operator';

export function auditAdminRoutes(deps: AppDeps): RouteSpec[] {
  return [listAuditLogRoute(deps)];
}

function listAuditLogRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/admin/v1/audit-log',
    operationId: 'listAuditLog',
    summary: 'Operator audit log, newest first',
    tag,
    auth: 'operator',
    query: { type: 'object', additionalProperties: false, properties: paginationQueryProperties },
    responses: { 200: { description: 'A page of entries.', schema: pageSchema(auditEntrySchema) } },
    async handle(ctx, { query }) {
      const keyset = createdAtKeyset(query.cursor, 'desc');
      const rows = await db.operatorAuditLog.findMany({ ...keyset, take: query.limit + 1 });
      const page = toPage(rows, query.limit, createdAtKey);
      ctx.body = {
        data: page.data.map((r) => ({ ...r, createdAt: r.createdAt.toISOString() })),
        nextCursor: page.nextCursor,
      };
    },
  });
}
