// Idempotency-Key on POST, PUT, PATCH and DELETE (API.md, "Safety and integration"), with Stripe's
// semantics (docs/decisions/0026-idempotency-keys.md):
// - a key belongs to the caller's token (an issuer token's id, or the operator token) and is
//   kept 24 hours (idempotency-store.ts);
// - the first request under a key runs; its answer (status, the headers the handler set, body)
//   is stored, and the same request sent again under that key gets the stored answer with
//   `Idempotent-Replayed: true`, without running again;
// - the key with another method, path or body: 409 idempotency_key_reused; while the first
//   request still runs: 409 idempotency_key_in_use (with Retry-After), as Stripe answers;
// - 4xx answers are stored and replayed like successes (the request was refused; a new
//   attempt takes a new key), except those marked retryable (a lost race: ApiError.retryable);
//   5xx and unexpected failures release the key, so that a retry runs again.
// A request without the header, and every GET, goes straight to its handler: no database
// round trip is added to them. Input that fails validation never reaches this layer, so it
// claims no key (as at Stripe).
import type { Context } from 'koa';
import { ApiError, errors } from '../../core/errors';
import { isValidIdempotencyKey, requestHash, seal, unseal } from '../../core/idempotency';
import { holdsCardNumber } from '../../core/rules/card-numbers';
import { hashToken } from '../../core/tokens';
import type { Logger } from '../../core/logger';
import type { Db } from '../../prisma/client';
import type { RouteInput, RouteSpec } from '../route';
import { issuerOf } from './auth';
import { renderError } from './error-handler';
import {
  claimKey,
  completeKey,
  deleteExpiredKeys,
  releaseKey,
  type KeyRef,
  type RequestFingerprint,
} from './idempotency-store';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
export const KEYED_METHODS: ReadonlySet<string> = new Set(['post', 'put', 'patch', 'delete']);
/**
 * The Idempotency-Key of a route that requires one (a posting that must never run twice, its key
 * kept with what it posted): 400 idempotency_key_required without it.
 */
export function requiredIdempotencyKey(ctx: Context, what: string): string {
  const key = ctx.get(IDEMPOTENCY_KEY_HEADER);
  if (!key)
    throw errors.validation('idempotency_key_required', `${what} needs an Idempotency-Key header.`, [
      { path: `/headers/${IDEMPOTENCY_KEY_HEADER}`, message: 'is required' },
    ]);
  return key;
}

/** Expired keys are deleted by the first keyed request of a process, then at most this often. */
export const CLEANUP_INTERVAL_MS = 10 * 60 * 1000;
// Koa computes the length of the body it sends; every other header the handler set is replayed.
const NOT_REPLAYED = new Set(['content-length']);

export interface Idempotency {
  db: Db;
  logger: Logger;
  /** performance.now() of this process's last cleanup run. */
  lastCleanupMs: number;
}

export function createIdempotency(deps: { db: Db; logger: Logger }): Idempotency {
  return { db: deps.db, logger: deps.logger, lastCleanupMs: Number.NEGATIVE_INFINITY };
}

interface StoredAnswer {
  headers: Record<string, string | string[]>;
  body: unknown;
}

interface KeyedRequest {
  ref: KeyRef;
  fingerprint: RequestFingerprint;
  /** The caller's bearer token: the stored answer is sealed under it. */
  secret: string;
  additionalData: string;
}

/** Not async: a request without the header costs one property lookup, not another promise. */
export function withIdempotency(
  idem: Idempotency,
  ctx: Context,
  spec: Pick<RouteSpec, 'method' | 'auth'>,
  input: RouteInput<unknown, unknown>,
  handle: () => Promise<void>,
): Promise<void> {
  const header = ctx.req.headers['idempotency-key'];
  // Routes without a caller (health, documents) are all reads: nothing to scope a key to.
  if (header === undefined || !KEYED_METHODS.has(spec.method) || spec.auth === 'none') return handle();
  return keyed(idem, ctx, spec.auth, header, input, handle);
}

async function keyed(
  idem: Idempotency,
  ctx: Context,
  auth: 'issuer' | 'operator',
  header: string | string[],
  input: RouteInput<unknown, unknown>,
  handle: () => Promise<void>,
): Promise<void> {
  if (typeof header !== 'string' || !isValidIdempotencyKey(header)) throw errors.invalidIdempotencyKey();
  // Keys are stored as sent: one holding a card number would put it in a table.
  if (holdsCardNumber(header)) throw errors.panDetected(`/headers/${IDEMPOTENCY_KEY_HEADER}`);
  const request = keyedRequest(ctx, auth, header, input);
  const claim = await claimKey(idem.db, request.ref, request.fingerprint);
  if (claim.kind === 'mismatch') throw errors.idempotencyKeyReused(differences(claim.first, request.fingerprint));
  if (claim.kind === 'in_progress') throw errors.idempotencyKeyInUse();
  if (claim.kind === 'completed') {
    replay(ctx, claim.status, JSON.parse(unseal(request.secret, request.additionalData, claim.sealed)) as StoredAnswer);
    return;
  }
  cleanUpNowAndThen(idem);
  await runAndStore(idem, ctx, request, claim.claimId, handle);
}

function keyedRequest(
  ctx: Context,
  auth: 'issuer' | 'operator',
  key: string,
  input: RouteInput<unknown, unknown>,
): KeyedRequest {
  // The guard has accepted "Bearer <token>" already.
  const secret = ctx.get('Authorization').slice('Bearer '.length);
  // An issuer's keys belong to the token (its id); the operator's to its token, named by a
  // prefix of its hash, so that a new OPERATOR_TOKEN starts with no keys.
  const scope = auth === 'issuer' ? issuerOf(ctx).tokenId : `operator:${hashToken(secret).slice(0, 16)}`;
  const fingerprint = { method: ctx.method, path: ctx.path, requestHash: requestHash(input) };
  const additionalData = JSON.stringify([scope, key, fingerprint.method, fingerprint.path, fingerprint.requestHash]);
  return { ref: { scope, key }, fingerprint, secret, additionalData };
}

function differences(first: RequestFingerprint, now: RequestFingerprint): Record<string, unknown> {
  const differs = (['method', 'path', 'requestHash'] as const)
    .filter((f) => first[f] !== now[f])
    .map((f) => (f === 'requestHash' ? 'body' : f));
  return { differs, firstRequest: { method: first.method, path: first.path } };
}

async function runAndStore(
  idem: Idempotency,
  ctx: Context,
  request: KeyedRequest,
  claimId: string,
  handle: () => Promise<void>,
): Promise<void> {
  const before = ctx.response.headers;
  try {
    await handle();
  } catch (err) {
    if (!(err instanceof ApiError) || err.status >= 500 || err.retryable) {
      await release(idem, ctx, request.ref, claimId);
      throw err;
    }
    renderError(ctx, err);
  }
  const answer: StoredAnswer = { headers: headersSetSince(before, ctx.response.headers), body: ctx.body ?? null };
  if (!isStorable(answer.body)) {
    // No keyed route answers with bytes or a stream; if one ever does, it is not replayable.
    ctx.state.log?.error({ status: ctx.status }, 'an answer under an Idempotency-Key is not JSON; the key is released');
    await release(idem, ctx, request.ref, claimId);
    return;
  }
  const sealed = seal(request.secret, request.additionalData, JSON.stringify(answer));
  try {
    const stored = await completeKey(idem.db, request.ref, claimId, ctx.status, new Uint8Array(sealed));
    if (!stored) ctx.state.log?.warn('an Idempotency-Key claim was taken over before its request answered');
  } catch (err) {
    // The work is done and this answer is its only record: the caller gets it. A retry sees the
    // key in use until the claim's lease ends, then runs again.
    ctx.state.log?.error({ err }, 'could not store the answer of an Idempotency-Key');
  }
}

/** Never fails the request: a key left claimed is taken over by a retry once its lease ends. */
async function release(idem: Idempotency, ctx: Context, ref: KeyRef, claimId: string): Promise<void> {
  try {
    await releaseKey(idem.db, ref, claimId);
  } catch (err) {
    ctx.state.log?.warn({ err }, 'could not release an Idempotency-Key; it stays claimed until its lease ends');
  }
}

function headersSetSince(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): Record<string, string | string[]> {
  const set: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(after)) {
    if (NOT_REPLAYED.has(name) || value === undefined || JSON.stringify(before[name]) === JSON.stringify(value))
      continue;
    set[name] = Array.isArray(value) ? value.map(String) : String(value);
  }
  return set;
}

function isStorable(body: unknown): boolean {
  if (body === null || typeof body !== 'object') return true;
  return !Buffer.isBuffer(body) && !ArrayBuffer.isView(body) && typeof (body as { pipe?: unknown }).pipe !== 'function';
}

function replay(ctx: Context, status: number, answer: StoredAnswer): void {
  // Body first: Koa picks a status when a body is set, and the stored one must win.
  ctx.body = answer.body;
  ctx.status = status;
  for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value);
  ctx.set(REPLAYED_HEADER, 'true');
}

function cleanUpNowAndThen(idem: Idempotency): void {
  const now = performance.now();
  if (now - idem.lastCleanupMs < CLEANUP_INTERVAL_MS) return;
  idem.lastCleanupMs = now;
  // After the claim, not awaited: the request does not wait for housekeeping.
  void deleteExpiredKeys(idem.db).then(
    (deleted) => {
      if (deleted > 0) idem.logger.info({ deleted }, 'expired Idempotency-Keys deleted');
    },
    (err: unknown) => idem.logger.warn({ err }, 'deleting expired Idempotency-Keys failed; the next run retries'),
  );
}
