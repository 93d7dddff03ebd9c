// Operator accounts and their tokens (API.md, "Operators with names"). Every change is audited
// in the same transaction, under the caller's name. A token is stored as its SHA-256 hash, like
// an issuer's (core/tokens.ts); the guard reads it on every call (api/middleware/auth.ts), so a
// revoked token or a disabled operator is refused from the commit on.
import { newAdminReason, type FourEyesReason } from '../../core/rules/four-eyes';
import { errors } from '../../core/errors';
import { classifyFailure } from '../../core/failures';
import { newId } from '../../core/ids';
import { generateOperatorToken, hashToken } from '../../core/tokens';
import type { Db } from '../../prisma/client';
import type { Operator, Prisma } from '../../prisma/generated/client';
import { recordAudit } from '../audit/store';
import { createdAtKey, createdAtKeyset, toPage } from '../pagination';
import type { OperatorRole } from './roles';

export interface OperatorInput {
  name: string;
  email: string;
  roles: readonly OperatorRole[];
}

export interface OperatorChanges {
  name?: string;
  roles?: readonly OperatorRole[];
  status?: 'active' | 'disabled';
}

type Tx = Prisma.TransactionClient;

async function newToken(tx: Tx, operatorId: string, now: Date): Promise<string> {
  const secret = generateOperatorToken();
  await tx.operatorToken.create({
    data: { id: newId('optok'), operatorId, tokenHash: hashToken(secret), createdAt: now },
  });
  return secret;
}

async function revokeTokens(tx: Tx, operatorId: string, now: Date): Promise<void> {
  await tx.operatorToken.updateMany({ where: { operatorId, revokedAt: null }, data: { revokedAt: now } });
}

/** A second account for one address is refused by the unique index, whichever request commits first. */
function emailTaken(err: unknown, email: string): Error {
  if (classifyFailure(err) !== 'unique_violation') return err as Error;
  return errors.conflict('operator_email_taken', `An operator with the email ${email} exists already.`);
}

export async function createOperator(
  db: Db,
  input: OperatorInput,
  actor: string,
  now: Date,
): Promise<{ operator: Operator; secret: string }> {
  const email = input.email.toLowerCase();
  try {
    return await db.$transaction(async (tx) => {
      const operator = await tx.operator.create({
        data: { id: newId('op'), name: input.name, email, roles: [...input.roles], createdAt: now, updatedAt: now },
      });
      const secret = await newToken(tx, operator.id, now);
      const details = { name: input.name, email, roles: input.roles };
      await recordAudit(tx, { actor, action: 'operator.create', targetId: operator.id, details }, now);
      return { operator, secret };
    });
  } catch (err) {
    throw emailTaken(err, email);
  }
}

export async function getOperator(db: Db | Tx, operatorId: string): Promise<Operator> {
  const operator = await db.operator.findUnique({ where: { id: operatorId } });
  if (!operator) throw errors.notFound('operator_not_found', `No operator ${operatorId}.`);
  return operator;
}

export async function listOperators(db: Db, limit: number, cursor: string | undefined) {
  const keyset = createdAtKeyset(cursor, 'asc');
  const rows = await db.operator.findMany({ where: keyset.where, orderBy: keyset.orderBy, take: limit + 1 });
  return toPage(rows, limit, createdAtKey);
}

// Serialises the changes that could take away the last admin: two racing ones each see another admin.
const ADMINS_LOCK = 5_801_993;

/**
 * With root switched off, the last active admin is all that can create or enable operators: a
 * change that would take that away is refused (409 last_admin). With root on, root is the way
 * back, and disabling a compromised sole admin must work.
 */
async function keepAnAdmin(tx: Tx, found: Operator, changes: OperatorChanges): Promise<void> {
  const wasAdmin = found.status === 'active' && found.roles.includes('admin');
  const staysAdmin =
    (changes.status ?? found.status) === 'active' && (changes.roles ?? found.roles).includes('admin' as OperatorRole);
  if (!wasAdmin || staysAdmin) return;
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(${ADMINS_LOCK})`;
  const others = await tx.operator.count({
    where: { id: { not: found.id }, status: 'active', roles: { has: 'admin' } },
  });
  if (others === 0)
    throw errors.conflict(
      'last_admin',
      'Root is switched off and this is the last active admin: name another admin first.',
    );
}

export async function updateOperator(
  db: Db,
  operatorId: string,
  changes: OperatorChanges,
  context: { actor: string; rootEnabled: boolean },
  now: Date,
): Promise<Operator> {
  return db.$transaction(async (tx) => {
    const found = await getOperator(tx, operatorId);
    if (!context.rootEnabled) await keepAnAdmin(tx, found, changes);
    const operator = await tx.operator.update({
      where: { id: operatorId },
      data: {
        name: changes.name,
        status: changes.status,
        roles: changes.roles ? [...changes.roles] : undefined,
        updatedAt: now,
      },
    });
    // Disabling ends the token too, so enabling again never revives a token that may have leaked.
    if (changes.status === 'disabled') await revokeTokens(tx, operatorId, now);
    const details = { before: pick(found, changes), after: { ...changes } };
    await recordAudit(tx, { actor: context.actor, action: 'operator.update', targetId: operatorId, details }, now);
    return operator;
  });
}

/** The stored values of the fields a change touches, for the audit entry. */
function pick(operator: Operator, changes: OperatorChanges): Record<string, unknown> {
  return Object.fromEntries(Object.keys(changes).map((k) => [k, operator[k as keyof OperatorChanges]]));
}

/** Revokes the live token and makes a new one, in one transaction: the old one is refused from the commit on. */
export async function rotateOperatorToken(
  db: Db,
  operatorId: string,
  actor: string,
  now: Date,
): Promise<{ operator: Operator; secret: string }> {
  return db.$transaction(async (tx) => {
    // Locks the operator's row, so that two rotations racing leave exactly one live token.
    const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM operator WHERE id = ${operatorId} FOR UPDATE`;
    if (locked.length === 0) throw errors.notFound('operator_not_found', `No operator ${operatorId}.`);
    const operator = await getOperator(tx, operatorId);
    if (operator.status !== 'active')
      throw errors.conflict('operator_disabled', 'The operator is disabled: set status active first.');
    await revokeTokens(tx, operatorId, now);
    const secret = await newToken(tx, operatorId, now);
    await recordAudit(tx, { actor, action: 'operator.token.rotate', targetId: operatorId }, now);
    return { operator, secret };
  });
}

/**
 * Whether naming an admin needs a second operator (four eyes): an operator who is to hold admin
 * and does not, while an active admin exists to be the second pair of eyes. The first admin (or
 * the way back in once none is left) goes through: there is no one to approve it.
 */
export async function newAdminHold(
  db: Db,
  rolesBefore: readonly string[],
  rolesAfter: readonly string[] | undefined,
): Promise<FourEyesReason | undefined> {
  const reason = newAdminReason(rolesBefore, rolesAfter);
  if (reason === undefined) return undefined;
  const admins = await db.operator.count({ where: { status: 'active', roles: { has: 'admin' } } });
  return admins > 0 ? reason : undefined;
}
