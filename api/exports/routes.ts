// Finance exports (docs/decisions/0025-reconciliation-export.md): an issuer's reward events of a period as a stream.
import { defineRoute, type RouteSpec } from '../route';
import { issuerOf } from '../middleware/auth';
import { errors } from '../../core/errors';
import type { AppDeps } from '../deps';
import { EXPORT_CONTENT_TYPES, type ExportFormat } from './format';
import { openRewardEventExport } from './stream';
import type { Validated } from '../../core/validated';
import {
  EXPORT_DESCRIPTION,
  MAX_EXPORT_DAYS,
  RewardEventExportCsv,
  RewardEventExportLine,
  exportQuerySchema,
} from './schemas';

const DAY_MS = 86_400_000;

type ExportQuery = Validated<typeof exportQuerySchema>;

/** What ajv cannot say about two fields together: the period is [from, to), not empty, at most a year. */
function periodOf(query: ExportQuery): { from: Date; to: Date } {
  const from = new Date(query.from);
  const to = new Date(query.to);
  if (!(from < to)) {
    throw errors.validation('invalid_query', 'The period is empty: from must be before to.', [
      { path: '/to', message: 'must be after from' },
    ]);
  }
  if (to.getTime() - from.getTime() > MAX_EXPORT_DAYS * DAY_MS) {
    throw errors.validation('invalid_query', `The period is longer than ${MAX_EXPORT_DAYS} days: export it in parts.`, [
      { path: '/to', message: `must be at most ${MAX_EXPORT_DAYS} days after from` },
    ]);
  }
  return { from, to };
}

/** reward-events_20261101T000000Z_20261201T000000Z.csv: sortable, and safe on every file system. */
function fileName(from: Date, to: Date, format: ExportFormat): string {
  const compact = (d: Date) => d.toISOString().replace(/[-:]/g, '').replace('.000Z', 'Z').replace('.', '');
  return `reward-events_${compact(from)}_${compact(to)}.${format}`;
}

export function exportRoutes(deps: AppDeps): RouteSpec[] {
  const { db, logger } = deps;
  return [
    defineRoute({
      method: 'get',
      path: '/api/v2/reward-events/export',
      operationId: 'exportRewardEvents',
      summary: 'Every reward event of a period, streamed as NDJSON or CSV, ending with a checksum line',
      description: EXPORT_DESCRIPTION,
      tag: 'Rewards',
      auth: 'issuer',
      query: exportQuerySchema,
      reasonCodes: { 400: { invalid_query: 'from not before to, or a period over the maximum' } },
      responses: {
        200: {
          description: 'The export, streamed (chunked); Content-Disposition names a file for it.',
          content: {
            'application/x-ndjson': { schema: RewardEventExportLine },
            'text/csv': { schema: RewardEventExportCsv },
          },
        },
      },
      async handle(ctx, { query }) {
        const { from, to } = periodOf(query);
        const stream = await openRewardEventExport(db, {
          issuerId: issuerOf(ctx).id,
          from,
          to,
          format: query.format,
          logger,
        });
        ctx.set('Content-Type', EXPORT_CONTENT_TYPES[query.format]);
        ctx.set('Content-Disposition', `attachment; filename="${fileName(from, to, query.format)}"`);
        // A snapshot of the books, different on every call for an open period: never from a cache.
        ctx.set('Cache-Control', 'no-store');
        ctx.body = stream;
      },
    }),
  ];
}
