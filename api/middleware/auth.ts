// Authentication guards (API.md, Authentication). Issuer routes take an issuer API token;
// /admin routes take a named operator's token (rwd_op_...) or OPERATOR_TOKEN, the break-glass
// account root, unless the deployment switched root off. Every failure is the same 401 so that a
// caller learns nothing about which tokens exist.
import type { Context } from 'koa';
import { errors } from '../../core/errors';
import type { Db } from '../../prisma/client';
import { hashToken, isWellFormedOperatorToken, isWellFormedToken, safeEqualHex } from '../../core/tokens';
import { OPERATOR_ROLES, ROOT_OPERATOR_ID, type AuthenticatedOperator, type OperatorRole } from '../operators/roles';
import type { TokenCache } from './token-cache';
import { addLogContext } from './request-id';
import type { RateLimitOverrides } from './rate-limit';

export type AuthKind = 'issuer' | 'operator' | 'none';

export interface AuthenticatedIssuer {
  id: string;
  name: string;
  environment: 'sandbox' | 'production';
  brandedAvailabilityDelayDays: number;
  tokenId: string;
  /** Carried (and cached) with the token so that the rate limit check reads no database. */
  rateLimits: RateLimitOverrides;
  /**
   * Sandbox test clock: how far the issuer's simulated now runs ahead of real time (always 0 in
   * production). Carried with the token for the same reason: reads that decide by "now" add it
   * without a query (api/sandbox/issuer-clock.ts).
   */
  clockOffsetMs: number;
  /**
   * The operator's override of INGESTION_BACKLOG_LIMIT (null: the deployment's), carried with the
   * token so that ingestion checks the issuer's backlog without reading the issuer.
   */
  ingestionBacklogLimit: number | null;
}

function bearer(ctx: Context): string {
  const header = ctx.get('Authorization');
  if (!header) throw errors.unauthenticated('missing_token', 'An Authorization: Bearer <token> header is required.');
  // The scheme is case-insensitive (RFC 7235); the token is not.
  const match = /^Bearer ([^\s]+)$/i.exec(header);
  if (!match) throw errors.unauthenticated('invalid_token', 'The Authorization header must be "Bearer <token>".');
  return match[1];
}

/** A fixed secret of the deployment (METRICS_TOKEN): the request must carry it as its bearer token. */
export function requireStaticToken(ctx: Context, expected: string, what: string): void {
  if (!safeEqualHex(hashToken(bearer(ctx)), hashToken(expected)))
    throw errors.unauthenticated('invalid_token', `The ${what} token is not valid.`);
}

export function createGuards(deps: {
  db: Db;
  /** OPERATOR_TOKEN; undefined when the deployment has switched root off (OPERATOR_ROOT=disabled). */
  operatorToken: string | undefined;
  tokenCache?: TokenCache;
}): Record<AuthKind, (ctx: Context) => Promise<void>> {
  const rootHash = deps.operatorToken === undefined ? undefined : hashToken(deps.operatorToken);
  return {
    none: async () => undefined,

    async operator(ctx) {
      const token = bearer(ctx);
      const operator = isWellFormedOperatorToken(token)
        ? await namedOperator(deps.db, hashToken(token))
        : rootHash !== undefined && safeEqualHex(hashToken(token), rootHash)
          ? { id: ROOT_OPERATOR_ID, roles: OPERATOR_ROLES }
          : undefined;
      if (!operator) throw errors.unauthenticated('invalid_token', 'The operator token is not valid.');
      ctx.state.operator = operator;
      // The audit log names the person (or root), not a shared token.
      ctx.state.actor = operator.id;
      addLogContext(ctx, { operatorId: operator.id });
    },

    async issuer(ctx) {
      const token = bearer(ctx);
      if (!isWellFormedToken(token)) throw errors.unauthenticated('invalid_token', 'The API token is not valid.');
      const tokenHash = hashToken(token);
      const cached = deps.tokenCache?.get(tokenHash, Date.now());
      if (cached) {
        authenticate(ctx, cached);
        return;
      }
      const row = await deps.db.apiToken.findUnique({ where: { tokenHash }, include: { issuer: true } });
      // The lookup is by hash, so timing reveals nothing about the secret; the explicit
      // constant-time comparison keeps that true if the lookup ever changes.
      if (!row || row.revokedAt !== null || !safeEqualHex(row.tokenHash, tokenHash)) {
        throw errors.unauthenticated('invalid_token', 'The API token is not valid.');
      }
      const issuer: AuthenticatedIssuer = {
        id: row.issuer.id,
        name: row.issuer.name,
        environment: row.issuer.environment as AuthenticatedIssuer['environment'],
        brandedAvailabilityDelayDays: row.issuer.brandedAvailabilityDelayDays,
        tokenId: row.id,
        rateLimits: {
          requestsPerSecond: row.issuer.rateLimitRequestsPerSecond,
          eventsPerSecond: row.issuer.rateLimitEventsPerSecond,
        },
        clockOffsetMs: Number(row.issuer.clockOffsetMs),
        ingestionBacklogLimit: row.issuer.ingestionBacklogLimit,
      };
      deps.tokenCache?.set(tokenHash, issuer, Date.now());
      authenticate(ctx, issuer);
    },
  };
}

/**
 * A named operator's token, read on every call: never cached, so that disabling an operator or
 * rotating their token refuses the old one at once in every API process (operator calls are few).
 */
async function namedOperator(db: Db, tokenHash: string): Promise<AuthenticatedOperator | undefined> {
  const row = await db.operatorToken.findUnique({ where: { tokenHash }, include: { operator: true } });
  if (!row || row.revokedAt !== null || row.operator.status !== 'active' || !safeEqualHex(row.tokenHash, tokenHash))
    return undefined;
  return { id: row.operator.id, roles: row.operator.roles as OperatorRole[] };
}

function authenticate(ctx: Context, issuer: AuthenticatedIssuer): void {
  ctx.state.issuer = issuer;
  addLogContext(ctx, { issuerId: issuer.id });
}

export function issuerOf(ctx: Context): AuthenticatedIssuer {
  const issuer = ctx.state.issuer as AuthenticatedIssuer | undefined;
  if (!issuer) throw new Error('issuerOf called on a route without issuer authentication');
  return issuer;
}
