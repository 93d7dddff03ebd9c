// Typed identifiers: a prefix followed by a lowercase UUID (API.md, Conventions).
//
// The UUIDs are version 7 (RFC 9562): the first 48 bits are the creation time in
// milliseconds, the rest random. Every table's primary key is one of these ids, and a random
// (version 4) key sends each insert to a random page of the key's index: on the ingestion path
// that was a dirtied page, and after every checkpoint a full-page image in the write-ahead
// log, per event. Time-ordered keys go to the right-hand edge of the index, a few hot pages.
// 74 random bits keep them unguessable in practice and unique across processes; what they
// reveal is the creation time, which every resource already shows.
import { randomFillSync } from 'node:crypto';

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
  'whe',
  'err',
  'iss',
  'tok',
  'aud',
  'adj',
  'clm',
  'po',
  'stm',
  'stmrun',
  'stmpay',
  'op',
  'optok',
  'apr',
] as const;
export type IdPrefix = (typeof ID_PREFIXES)[number];

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${uuidV7()}`;
}

// Random bytes drawn 4 KiB at a time: one system call per 256 ids instead of one per id.
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** A version 7 UUID (RFC 9562) for the given time: 48 bits of milliseconds, version, variant, 74 random bits. */
export function uuidV7(nowMs: number = Date.now()): string {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const b = pool;
  const o = poolOffset;
  poolOffset += 16;
  // Division, not bit shifts: JavaScript's shifts are 32-bit, the time is 48.
  const high = Math.floor(nowMs / 0x1000000);
  const low = nowMs % 0x1000000;
  b[o] = (high >>> 16) & 0xff;
  b[o + 1] = (high >>> 8) & 0xff;
  b[o + 2] = high & 0xff;
  b[o + 3] = (low >>> 16) & 0xff;
  b[o + 4] = (low >>> 8) & 0xff;
  b[o + 5] = low & 0xff;
  b[o + 6] = 0x70 | (b[o + 6] & 0x0f);
  b[o + 8] = 0x80 | (b[o + 8] & 0x3f);
  const h = (i: number) => HEX[b[o + i]];
  return `${h(0)}${h(1)}${h(2)}${h(3)}-${h(4)}${h(5)}-${h(6)}${h(7)}-${h(8)}${h(9)}-${h(10)}${h(11)}${h(12)}${h(13)}${h(14)}${h(15)}`;
}

/** The pattern of ids of one prefix, or of any of several (`^(auth|txn)_...$`). */
export function idPattern(prefix: IdPrefix | readonly IdPrefix[]): string {
  return typeof prefix === 'string' ? `^${prefix}_${UUID}$` : `^(${prefix.join('|')})_${UUID}$`;
}

const compiled = new Map<IdPrefix, RegExp>(ID_PREFIXES.map((p) => [p, new RegExp(idPattern(p))]));

export function isId(prefix: IdPrefix | readonly IdPrefix[], value: unknown): value is string {
  if (typeof prefix !== 'string') return prefix.some((p) => isId(p, value));
  return typeof value === 'string' && compiled.get(prefix)!.test(value);
}
