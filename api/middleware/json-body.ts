// JSON-only request bodies (API.md, Conventions): 415 for other media types, 413 past
// 1 MiB, 400 for malformed JSON. Parsed bodies are also screened for what PostgreSQL or
// our code cannot hold safely, so bad input is a 400 and never a 500 later, and for card
// numbers, refused with 422 before anything reads, stores or logs the body (decision 0054).
import type { Middleware } from 'koa';
import { ApiError, CARD_NUMBER_REFUSED, errors } from '../../core/errors';
import { holdsCardNumber, redactCardNumbers } from '../../core/rules/card-numbers';

export const BODY_LIMIT_BYTES = 1024 * 1024;
export const MAX_JSON_DEPTH = 32;

export interface JsonBodyOptions {
  limitBytes?: number;
  /**
   * Paths whose body is a batch of items each accepted or refused on its own (ingestion):
   * what is unsafe inside one item is recorded for that item (`unsafeItemsOf`) instead of
   * refusing the whole body, so one bad string never costs an issuer the rest of its batch.
   */
  screensItemsAlone?: ReadonlySet<string>;
}

export function jsonBody(options: JsonBodyOptions = {}): Middleware {
  const limitBytes = options.limitBytes ?? BODY_LIMIT_BYTES;
  const itemPaths = options.screensItemsAlone ?? new Set<string>();
  return async (ctx, next) => {
    if (!['POST', 'PUT', 'PATCH', 'DELETE'].includes(ctx.method) || !hasBody(ctx.req.headers)) return next();
    if (!ctx.is('application/json')) {
      throw new ApiError('unsupported_media_type', 'Request bodies must be application/json.');
    }
    const declared = Number(ctx.get('Content-Length') || 0);
    if (declared > limitBytes) {
      ctx.set('Connection', 'close');
      throw tooLarge(limitBytes);
    }
    const raw = await readLimited(ctx.req, limitBytes);
    const text = decodeUtf8(raw);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw errors.validation('invalid_json', `The body is not valid JSON: ${(err as Error).message}`);
    }
    const escapes = text.includes('\\u');
    if (itemPaths.has(ctx.path) && parsed !== null && typeof parsed === 'object') {
      const unsafe = unsafeItems(parsed, escapes);
      if (unsafe.size > 0) (ctx.state as ScreenedState)[UNSAFE_ITEMS] = unsafe;
    } else {
      const found = findUnsafeJson(parsed, escapes, 0);
      if (found?.reasonCode === 'pan_detected') throw errors.panDetected(found.path);
      if (found)
        throw errors.validation(found.reasonCode, found.message, [{ path: found.path, message: found.problem }]);
    }
    (ctx.request as { body?: unknown }).body = parsed;
    await next();
  };
}

const UNSAFE_ITEMS = Symbol('unsafeItems');
type ScreenedState = { [UNSAFE_ITEMS]?: Map<number, UnsafeJson> };

/** What was unsafe in each item of a batch body, by the item's index (0 for a single object). */
export function unsafeItemsOf(ctx: { state: unknown }): ReadonlyMap<number, UnsafeJson> {
  return (ctx.state as ScreenedState)[UNSAFE_ITEMS] ?? new Map();
}

/** Screens each item of an array (or the single object) on its own, as one level below the root. */
function unsafeItems(parsed: object, escapes: boolean): Map<number, UnsafeJson> {
  const items = Array.isArray(parsed) ? parsed : [parsed];
  const depth = Array.isArray(parsed) ? 1 : 0;
  const unsafe = new Map<number, UnsafeJson>();
  items.forEach((item: unknown, index) => {
    const found = findUnsafeJson(item, escapes, depth);
    if (found) unsafe.set(index, found);
  });
  return unsafe;
}

function hasBody(headers: NodeJS.Dict<string | string[]>): boolean {
  return headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;
}

function tooLarge(limitBytes: number): ApiError {
  return new ApiError('payload_too_large', `Request bodies are limited to ${limitBytes} bytes.`, {
    details: { limitBytes },
  });
}

async function readLimited(stream: AsyncIterable<Buffer>, limitBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += chunk.length;
    if (size > limitBytes) throw tooLarge(limitBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function decodeUtf8(raw: Buffer): string {
  try {
    return utf8.decode(raw);
  } catch {
    throw errors.validation('invalid_json', 'The body is not valid UTF-8.');
  }
}

/**
 * Walks the parsed value once, iteratively (a 1 MiB body can nest 500k levels deep, which
 * would overflow a recursive walk). Rejects nesting past MAX_JSON_DEPTH, `__proto__` keys,
 * NUL characters and unpaired surrogates; PostgreSQL rejects the last two in text and jsonb.
 * Every string and key is also looked at for a card number (a count of its digits first).
 * This runs on every ingested event, so the walk allocates no paths: a node keeps its parent
 * and key, and the JSON Pointer is written only for the error. Strings are only checked when
 * the text has a \u escape: valid UTF-8 (decoded strictly above) cannot hold an unpaired
 * surrogate, and JSON cannot hold a raw NUL, so an escape is the only way either gets in.
 */
interface Node {
  value: unknown;
  depth: number;
  parent: Node | undefined;
  key: string;
}

/** What JSON our code or PostgreSQL cannot hold safely; its path is relative to `root`. */
export interface UnsafeJson {
  reasonCode: 'invalid_json' | 'invalid_body' | 'pan_detected';
  message: string;
  path: string;
  problem: string;
}

export function findUnsafeJson(root: unknown, escapes: boolean, rootDepth: number): UnsafeJson | undefined {
  const stack: Node[] = [{ value: root, depth: rootDepth, parent: undefined, key: '' }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const { value, depth } = node;
    if (typeof value === 'string') {
      if (escapes && !safeString(value)) return unsafeString(node);
      if (holdsCardNumber(value) && !namesMerchant(node)) return cardNumber(node);
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) {
      return {
        reasonCode: 'invalid_json',
        message: `JSON nesting deeper than ${MAX_JSON_DEPTH} levels is not accepted.`,
        path: pointerOf(node),
        problem: 'is nested too deeply',
      };
    }
    const isArray = Array.isArray(value);
    for (const key of Object.keys(value)) {
      const child: Node = { value: (value as Record<string, unknown>)[key], depth: depth + 1, parent: node, key };
      if (!isArray) {
        if (key === '__proto__') {
          return {
            reasonCode: 'invalid_body',
            message: 'The key "__proto__" is not accepted.',
            path: pointerOf(child),
            problem: 'is a reserved key',
          };
        }
        if (escapes && !safeString(key)) return unsafeString(child);
        if (holdsCardNumber(key)) return cardNumber(child);
      }
      stack.push(child);
    }
  }
  return undefined;
}

/** The node's JSON Pointer (RFC 6901), "/" for the root. */
function pointerOf(node: Node): string {
  const keys: string[] = [];
  for (let n: Node | undefined = node; n?.parent; n = n.parent)
    keys.push(n.key.replace(/~/g, '~0').replace(/\//g, '~1'));
  return keys.length === 0 ? '/' : `/${keys.reverse().join('/')}`;
}

function safeString(value: string): boolean {
  return !value.includes('\u0000') && value.isWellFormed();
}

/**
 * An acquirer's merchant id (an event's `merchantId`, a merchant's `acquirerMerchantIds`) is a
 * number of up to 15 digits by design, one in ten passing Luhn; it identifies the merchant, not a
 * card, and refusing it would refuse purchases at that merchant (decision 0054).
 */
const namesMerchant = (node: Node): boolean => node.key === 'merchantId' || node.parent?.key === 'acquirerMerchantIds';

/** Where a card number is, the path itself written without it (a key may be the number). */
function cardNumber(at: Node): UnsafeJson {
  const path = redactCardNumbers(pointerOf(at));
  return { reasonCode: 'pan_detected', message: CARD_NUMBER_REFUSED, path, problem: 'holds a card number' };
}

function unsafeString(at: Node): UnsafeJson {
  return {
    reasonCode: 'invalid_body',
    message: 'Strings must be well-formed Unicode without NUL characters.',
    path: pointerOf(at),
    problem: 'contains a NUL character or an unpaired surrogate',
  };
}
