// Operator API (API.md, "Operators with names"): the audit trail, read by page (newest first),
// exported as NDJSON in the chain's order, and verified.
import { Readable } from 'node:stream';
import { defineRoute, type RouteSpec } from '../route';
import { createdAtKey, createdAtKeyset, pageSchema, toPage } from '../pagination';
import type { AppDeps } from '../deps';
import { poolOf } from '../../prisma/client';
import { verifyAuditChain } from '../../core/domain/audit-chain';
import { auditEntrySchema, auditQuerySchema, auditVerdictSchema } from './schemas';
import { auditWhere, exportLines } from './store';
import { presentAuditEntry } from './present';

const tag = 'Operator';

export function auditAdminRoutes(deps: AppDeps): RouteSpec[] {
  return [listAuditLogRoute(deps), verifyAuditLogRoute(deps)];
}

function listAuditLogRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/admin/v1/audit-log',
    operationId: 'listAuditLog',
    summary: 'The audit trail, newest first, filtered; or every matching row as NDJSON',
    description:
      'Every operator call that changes something, or was refused or failed, has one row (its outcome says how it ended); ' +
      "the service's own records and the issuers' customer-service postings are here too. Rows are append-only and " +
      'hash-chained: GET /admin/v1/audit-log/verify checks the chain.',
    tag,
    auth: 'operator',
    query: auditQuerySchema,
    reasonCodes: { 400: { invalid_query: 'from not before to' } },
    responses: {
      200: {
        description: 'A page of entries (format=json), or every matching entry a line (format=ndjson).',
        content: {
          'application/json': { schema: pageSchema(auditEntrySchema) },
          'application/x-ndjson': { schema: auditEntrySchema },
        },
      },
    },
    async handle(ctx, { query }) {
      const where = auditWhere(query);
      if (query.format === 'ndjson') {
        ctx.set('Content-Type', 'application/x-ndjson');
        ctx.set('Cache-Control', 'no-store');
        ctx.body = Readable.from(exportLines(db, where, presentAuditEntry));
        return;
      }
      const keyset = createdAtKeyset(query.cursor, 'desc');
      const rows = await db.operatorAuditLog.findMany({
        where: { AND: [where, keyset.where] },
        orderBy: keyset.orderBy,
        take: query.limit + 1,
      });
      const page = toPage(rows, query.limit, createdAtKey);
      ctx.body = { data: page.data.map(presentAuditEntry), nextCursor: page.nextCursor };
    },
  });
}

function verifyAuditLogRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/admin/v1/audit-log/verify',
    operationId: 'verifyAuditLog',
    summary: 'Check the audit trail: every hash recomputed, every link and place in the chain',
    description:
      'Reads the whole chain up to its head (rows appended meanwhile are left for the next check) and recomputes each ' +
      "row's hash: ok, or the first row where the chain breaks and why. The same check as `npm run audit:verify`. " +
      'A million rows take seconds; it is a read and changes nothing.',
    tag,
    auth: 'operator',
    responses: { 200: { description: 'The verdict.', schema: auditVerdictSchema } },
    async handle(ctx) {
      ctx.set('Cache-Control', 'no-store');
      ctx.body = await verifyAuditChain(poolOf(db));
    },
  });
}
