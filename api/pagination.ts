// Cursor pagination (API.md, Conventions): ?limit=1..200 (default 50) and an opaque
// ?cursor= that encodes the sort key of the last row served, so pages neither skip nor
// repeat rows while new ones are written.
import { errors } from '../core/errors';
import { exampleOf, named, type NamedSchema } from './schemas/named';
import { EXAMPLE_TIME } from './schemas/examples';

export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 200;

export const paginationQueryProperties = {
  limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE_LIMIT, default: DEFAULT_PAGE_LIMIT },
  cursor: { type: 'string', minLength: 1, maxLength: 512, description: 'nextCursor of the previous page.' },
} as const;

/**
 * The page of a named item schema, named after it (`Merchant` → `MerchantPage`), with an
 * example built from the item's: a list route cannot publish an anonymous page.
 */
export function pageSchema(item: NamedSchema) {
  const example = exampleOf(item);
  return named(
    `${item.title}Page`,
    {
      type: 'object',
      required: ['data', 'nextCursor'],
      properties: {
        data: { type: 'array', items: item },
        nextCursor: {
          type: ['string', 'null'],
          description: 'Pass as ?cursor= for the next page; null on the last page.',
        },
      },
    },
    example === undefined ? undefined : { data: [example], nextCursor: encodeCursor([EXAMPLE_TIME, 'next']) },
  );
}

export function encodeCursor(key: Array<string | number>): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

export function decodeCursor(cursor: string | undefined, arity: number): Array<string | number> | undefined {
  if (cursor === undefined) return undefined;
  try {
    const key: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(key) &&
      key.length === arity &&
      key.every((k) => typeof k === 'string' || typeof k === 'number')
    ) {
      return key;
    }
  } catch {
    // fall through to the 400 below
  }
  throw errors.validation('invalid_query', 'The cursor is not one this service issued.', [
    { path: '/cursor', message: 'is invalid' },
  ]);
}

/** Takes limit + 1 rows; the extra row only says whether another page exists. */
export function toPage<T>(rows: T[], limit: number, keyOf: (row: T) => Array<string | number>) {
  const data = rows.slice(0, limit);
  const nextCursor = rows.length > limit && data.length > 0 ? encodeCursor(keyOf(data[data.length - 1])) : null;
  return { data, nextCursor };
}

/** A timestamp taken from a decoded cursor; a forged cursor gets the same 400 as a garbled one. */
export function cursorDate(value: string | number): Date {
  const date = new Date(value);
  if (typeof value !== 'string' || Number.isNaN(date.getTime())) {
    throw errors.validation('invalid_query', 'The cursor is not one this service issued.', [
      { path: '/cursor', message: 'is invalid' },
    ]);
  }
  return date;
}

/**
 * Keyset paging on (createdAt, id), the order most lists use: the filter for rows beyond the
 * cursor and the ordering, for a Prisma findMany, in either direction.
 */
export function createdAtKeyset(cursor: string | undefined, order: 'asc' | 'desc') {
  const after = decodeCursor(cursor, 2);
  const beyond = (value: Date | string) => (order === 'asc' ? { gt: value } : { lt: value });
  return {
    where: after
      ? {
          OR: [
            { createdAt: beyond(cursorDate(after[0])) as { gt: Date } | { lt: Date } },
            { createdAt: cursorDate(after[0]), id: beyond(String(after[1])) as { gt: string } | { lt: string } },
          ],
        }
      : {},
    orderBy: [{ createdAt: order }, { id: order }],
  };
}

/** The cursor key of a row paged by createdAtKeyset. */
export const createdAtKey = (row: { createdAt: Date; id: string }): string[] => [row.createdAt.toISOString(), row.id];
