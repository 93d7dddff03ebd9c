// JSON-only request bodies (API.md, Conventions): 415 for other media types, 413 past
// 1 MiB, 400 for malformed JSON. Parsed bodies are also screened for what PostgreSQL or
// our code cannot hold safely, so bad input is a 400 and never a 500 later.
import type { Middleware } from 'koa';
import { ApiError, errors } from '../../core/errors';

export const BODY_LIMIT_BYTES = 1024 * 1024;
export const MAX_JSON_DEPTH = 32;

export function jsonBody(limitBytes = BODY_LIMIT_BYTES): Middleware {
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
    screen(parsed, text);
    (ctx.request as { body?: unknown }).body = parsed;
    await next();
  };
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

function screen(root: unknown, text: string): void {
  const strings = text.includes('\\u');
  const stack: Node[] = [{ value: root, depth: 0, parent: undefined, key: '' }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const { value, depth } = node;
    if (typeof value === 'string') {
      if (strings) checkString(value, node);
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) {
      throw errors.validation('invalid_json', `JSON nesting deeper than ${MAX_JSON_DEPTH} levels is not accepted.`, [
        { path: pointerOf(node), message: 'is nested too deeply' },
      ]);
    }
    const isArray = Array.isArray(value);
    for (const key of Object.keys(value)) {
      const child: Node = { value: (value as Record<string, unknown>)[key], depth: depth + 1, parent: node, key };
      if (!isArray) {
        if (key === '__proto__') {
          throw errors.validation('invalid_body', 'The key "__proto__" is not accepted.', [
            { path: pointerOf(child), message: 'is a reserved key' },
          ]);
        }
        if (strings) checkString(key, child);
      }
      stack.push(child);
    }
  }
}

/** The node's JSON Pointer (RFC 6901), "/" for the root. */
function pointerOf(node: Node): string {
  const keys: string[] = [];
  for (let n: Node | undefined = node; n?.parent; n = n.parent)
    keys.push(n.key.replace(/~/g, '~0').replace(/\//g, '~1'));
  return keys.length === 0 ? '/' : `/${keys.reverse().join('/')}`;
}

function checkString(value: string, at: Node): void {
  if (value.includes('\u0000') || !value.isWellFormed()) {
    throw errors.validation('invalid_body', 'Strings must be well-formed Unicode without NUL characters.', [
      { path: pointerOf(at), message: 'contains a NUL character or an unpaired surrogate' },
    ]);
  }
}
