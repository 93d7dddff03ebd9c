// The one table of which role each /admin route needs (API.md, "Operators with names"). Reads
// need any role; a mutating route names the one role that may call it. The guard checks it
// before the route validates its input or claims an Idempotency-Key (api/route.ts), so a refused
// call does nothing; /openapi.json shows it on every operation (x-required-role). A route that
// is missing here cannot be mounted (routeRole throws), and test/api/operator-route-roles.test.ts
// walks every route, so a new /admin route cannot slip in without a decision.
import type { Context } from 'koa';
import { errors } from '../../core/errors';
import type { HttpMethod } from '../route';
import type { AuthenticatedOperator, OperatorRole } from './roles';

/**
 * `any`: every role may call it (reads). `approval`: the role of the call an approval holds,
 * which the route checks itself once it has read the approval (api/approvals/store.ts).
 */
export type RequiredRole = OperatorRole | 'any' | 'approval';

export const ROUTE_ROLES: Record<string, RequiredRole> = {
  // Reads.
  listAuditLog: 'any',
  verifyAuditLog: 'any',
  getTrialBalance: 'any',
  listLedgerAccountEntries: 'any',
  listClaimsAsOperator: 'any',
  getClaimAsOperator: 'any',
  getOfferLift: 'any',
  getMerchantLift: 'any',
  getIssuer: 'any',
  listMerchantsAdmin: 'any',
  getMerchantAdmin: 'any',
  listOffersAdmin: 'any',
  getOfferAdmin: 'any',
  getStatementRun: 'any',
  listStatements: 'any',
  getStatement: 'any',
  listOperators: 'any',
  listApprovals: 'any',
  getApproval: 'any',
  // The second operator of four eyes: whoever holds the held call's role, but its maker.
  approveApproval: 'approval',
  rejectApproval: 'approval',
  getCurrentOperator: 'any',
  // Support: claims, redelivery, reprocessing.
  approveClaim: 'support',
  rejectClaim: 'support',
  adminReplayWebhook: 'support',
  reprocessTransaction: 'support',
  // Finance: statement runs and payments.
  createStatementRun: 'finance',
  payStatement: 'finance',
  // Catalogue: merchants and offers (an offer's budget and audience are fields of the offer).
  createMerchant: 'catalogue',
  updateMerchant: 'catalogue',
  createOffer: 'catalogue',
  updateOffer: 'catalogue',
  // Admin: operators, issuers, their tokens and limits.
  createOperator: 'admin',
  updateOperator: 'admin',
  rotateOperatorToken: 'admin',
  createIssuer: 'admin',
  updateIssuer: 'admin',
  createIssuerToken: 'admin',
  revokeIssuerToken: 'admin',
};

/** The role a route needs; throws for an operator route the table does not name, or a read that needs a role. */
export function routeRole(route: { operationId: string; method: HttpMethod }): RequiredRole {
  const role = ROUTE_ROLES[route.operationId];
  if (role === undefined) throw new Error(`${route.operationId}: no role in api/operators/route-roles.ts`);
  // Every role reads (API.md): a GET that needed one would lock viewers out of it.
  if (route.method === 'get' && role !== 'any') throw new Error(`${route.operationId}: a read must need any role`);
  if (route.method !== 'get' && role === 'any') throw new Error(`${route.operationId}: a change must need a role`);
  if (route.method === 'get' && role === 'approval') throw new Error(`${route.operationId}: a read must need any role`);
  return role;
}

/** Checks the caller's role before the route runs (api/route.ts). */
export type Authorize = (ctx: Context, operationId: string, role: RequiredRole) => Promise<void>;

/** Refuses, with 403 forbidden_role, an operator who does not hold the route's role. */
export function requireRole(ctx: Context, role: RequiredRole): void {
  if (role === 'any' || role === 'approval') return;
  const operator = ctx.state.operator as AuthenticatedOperator | undefined;
  if (!operator) throw new Error('requireRole called on a route without operator authentication');
  if (!operator.roles.includes(role)) throw errors.forbiddenRole(role, operator.roles);
}

/** The sentence the API reference adds to an operation's description. */
export function roleSentence(role: RequiredRole): string {
  if (role === 'approval')
    return 'Needs the role of the call the approval holds, and another operator than the one who asked (403 `forbidden_role`, 409 `same_operator` otherwise; nothing is done).';
  return role === 'any'
    ? 'Any operator role may call this (every role reads).'
    : `Needs the operator role \`${role}\` (403 \`forbidden_role\` otherwise; nothing is done).`;
}
