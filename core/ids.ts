// Typed identifiers: a prefix followed by a lowercase UUID (API.md, Conventions).
import { randomUUID } from 'node:crypto';

export const ID_PREFIXES = [
  'chg',
  'ch',
  'card',
  'mp',
  'ofr',
  'auth',
  'txn',
  'brevt',
  'rg',
  'evt',
  'err',
  'iss',
  'tok',
  'aud',
] as const;
export type IdPrefix = (typeof ID_PREFIXES)[number];

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomUUID()}`;
}

/** The JSON-schema pattern of one id kind, shared by validation and the OpenAPI document. */
/** The pattern of ids of one prefix, or of any of several (`^(auth|txn)_...$`). */
export function idPattern(prefix: IdPrefix | readonly IdPrefix[]): string {
  return typeof prefix === 'string' ? `^${prefix}_${UUID}$` : `^(${prefix.join('|')})_${UUID}$`;
}

const compiled = new Map<IdPrefix, RegExp>(ID_PREFIXES.map((p) => [p, new RegExp(idPattern(p))]));

export function isId(prefix: IdPrefix | readonly IdPrefix[], value: unknown): value is string {
  if (typeof prefix !== 'string') return prefix.some((p) => isId(p, value));
  return typeof value === 'string' && compiled.get(prefix)!.test(value);
}
