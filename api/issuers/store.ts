// Issuers and their API tokens. Shared by the operator API, the admin CLI and the dev
// stack's first-run setup, so all three behave the same and all three are audited.
import { errors } from '../../core/errors';
import { newId } from '../../core/ids';
import { generateToken, hashToken } from '../../core/tokens';
import type { Db } from '../../prisma/client';
import type { ApiToken, Issuer, Prisma } from '../../prisma/generated/client';
import { AUTH_CHANGED_CHANNEL } from '../middleware/token-cache';
import { recordAudit } from '../audit/store';
import type { IssuerChanges, IssuerInput, RateLimitChange } from './schemas';
import { normaliseLeadDays } from '../../core/rules/reward-notices';
import { formatDuration, parseDuration } from '../../core/duration';
import { DISABLE_AFTER_BOUNDS } from './schemas';

/** API processes cache token → issuer; this tells them, at commit, to forget the issuer. */
async function notifyAuthChanged(tx: Prisma.TransactionClient, issuerId: string): Promise<void> {
  await tx.$executeRaw`SELECT pg_notify(${AUTH_CHANGED_CHANNEL}, ${issuerId})`;
}

export async function createIssuer(db: Db, input: IssuerInput, actor: string, now: Date): Promise<Issuer> {
  return db.$transaction(async (tx) => {
    const issuer = await tx.issuer.create({
      data: {
        id: newId('iss'),
        name: input.name,
        environment: input.environment,
        brandedAvailabilityDelayDays: input.brandedAvailabilityDelayDays ?? 0,
        ...(input.expiryNoticeDays ? { expiryNoticeDays: normaliseLeadDays(input.expiryNoticeDays) } : {}),
        createdAt: now,
        updatedAt: now,
      },
    });
    await recordAudit(tx, { actor, action: 'issuer.create', targetId: issuer.id, details: { ...input } }, now);
    return issuer;
  });
}

export async function getIssuer(db: Db, issuerId: string): Promise<Issuer> {
  const issuer = await db.issuer.findUnique({ where: { id: issuerId } });
  if (!issuer) throw errors.notFound('issuer_not_found', `No issuer ${issuerId}.`);
  return issuer;
}

export async function updateIssuer(
  db: Db,
  issuerId: string,
  changes: IssuerChanges,
  actor: string,
  now: Date,
): Promise<Issuer> {
  return db.$transaction(async (tx) => {
    const found = await tx.issuer.findUnique({ where: { id: issuerId } });
    if (!found) throw errors.notFound('issuer_not_found', `No issuer ${issuerId}.`);
    const {
      rateLimit,
      expiryNoticeDays,
      webhookEndpointDisableAfter,
      adjustmentLimitMinor,
      approvalThresholdMinor,
      ...plain
    } = changes;
    const issuer = await tx.issuer.update({
      where: { id: issuerId },
      data: {
        ...plain,
        ...(expiryNoticeDays ? { expiryNoticeDays: normaliseLeadDays(expiryNoticeDays) } : {}),
        ...rateLimitColumns(rateLimit),
        ...disableAfterColumn(webhookEndpointDisableAfter),
        ...(adjustmentLimitMinor === undefined ? {} : { adjustmentLimitMinor: BigInt(adjustmentLimitMinor) }),
        ...(approvalThresholdMinor === undefined ? {} : { approvalThresholdMinor: BigInt(approvalThresholdMinor) }),
        updatedAt: now,
      },
    });
    if (expiryNoticeDays) await replanNotices(tx, issuerId);
    await notifyAuthChanged(tx, issuerId);
    await recordAudit(tx, { actor, action: 'issuer.update', targetId: issuerId, details: { ...changes } }, now);
    return issuer;
  });
}

/**
 * New lead times apply to the grants the issuer holds now: each spendable grant with value
 * left is looked at by the next scan, which plans its next notice by them (a lead time
 * already behind it is not sent late; a smaller one already passed is).
 */
async function replanNotices(tx: Prisma.TransactionClient, issuerId: string): Promise<void> {
  await tx.$executeRaw`
    UPDATE reward_grant SET next_notice_at = GREATEST(available_at, now())
     WHERE issuer_id = ${issuerId} AND remaining_minor > 0 AND expires_at > now()`;
}

/** Fields left out keep their value; null resets to the default. */
function rateLimitColumns(change: RateLimitChange | undefined): Prisma.IssuerUpdateInput {
  if (change === undefined) return {};
  if (change === null) return { rateLimitRequestsPerSecond: null, rateLimitEventsPerSecond: null };
  return {
    ...(change.requestsPerSecond !== undefined ? { rateLimitRequestsPerSecond: change.requestsPerSecond } : {}),
    ...(change.eventsPerSecond !== undefined ? { rateLimitEventsPerSecond: change.eventsPerSecond } : {}),
  };
}

/**
 * The override of WEBHOOK_ENDPOINT_DISABLE_AFTER as stored: null for the deployment's, 'never', or
 * a duration within DISABLE_AFTER_BOUNDS in its shortest spelling (`120m` is stored `2h`).
 */
function disableAfterColumn(change: string | null | undefined): Prisma.IssuerUpdateInput {
  if (change === undefined) return {};
  if (change === null || change === 'never') return { webhookEndpointDisableAfter: change };
  const ms = parseDuration(change);
  const [min, max] = [parseDuration(DISABLE_AFTER_BOUNDS.min)!, parseDuration(DISABLE_AFTER_BOUNDS.max)!];
  if (ms === undefined || ms < min || ms > max) {
    const message = `must be a duration from ${DISABLE_AFTER_BOUNDS.min} to ${DISABLE_AFTER_BOUNDS.max}, or never`;
    throw errors.validation('invalid_body', `webhookEndpointDisableAfter ${message}.`, [
      { path: '/webhookEndpointDisableAfter', message },
    ]);
  }
  return { webhookEndpointDisableAfter: formatDuration(ms) };
}

/** Returns the stored token record and its secret, which is never available again. */
export async function createToken(
  db: Db,
  issuerId: string,
  label: string | undefined,
  actor: string,
  now: Date,
): Promise<{ token: ApiToken; secret: string }> {
  return db.$transaction(async (tx) => {
    const issuer = await tx.issuer.findUnique({ where: { id: issuerId } });
    if (!issuer) throw errors.notFound('issuer_not_found', `No issuer ${issuerId}.`);
    const secret = generateToken();
    const token = await tx.apiToken.create({
      data: { id: newId('tok'), issuerId, label: label ?? null, tokenHash: hashToken(secret), createdAt: now },
    });
    await recordAudit(tx, { actor, action: 'token.create', targetId: token.id, details: { issuerId, label } }, now);
    return { token, secret };
  });
}

export async function revokeToken(db: Db, issuerId: string, tokenId: string, actor: string, now: Date): Promise<void> {
  await db.$transaction(async (tx) => {
    const token = await tx.apiToken.findFirst({ where: { id: tokenId, issuerId } });
    if (!token) throw errors.notFound('token_not_found', `No token ${tokenId} for issuer ${issuerId}.`);
    if (token.revokedAt) return;
    await tx.apiToken.update({ where: { id: tokenId }, data: { revokedAt: now } });
    await notifyAuthChanged(tx, issuerId);
    await recordAudit(tx, { actor, action: 'token.revoke', targetId: tokenId, details: { issuerId } }, now);
  });
}
