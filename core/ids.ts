// Typed identifiers: a prefix followed by a lowercase UUID (API.md, Conventions).
import { randomUUID } from 'node:crypto';

export const ID_PREFIXES = [
  'chg', 'ch', 'card', 'mp', 'ofr', 'auth', 'txn', 'brevt', 'rg', 'evt', 'err', 'iss', 'tok', 'aud',
] as const;
export type IdPrefix = (typeof ID_PREFIXES)[number];

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomUUID()}`;
}

/** The JSON-schema pattern of one id kind, shared by validation and the OpenAPI document. */
export function idPattern(prefix: IdPrefix): string {
  return `^${prefix}_${UUID}$`;
}

const compiled = new Map<IdPrefix, RegExp>(ID_PREFIXES.map((p) => [p, new RegExp(idPattern(p))]));

export function isId(prefix: IdPrefix, value: unknown): value is string {
  return typeof value === 'string' && compiled.get(prefix)!.test(value);
}
