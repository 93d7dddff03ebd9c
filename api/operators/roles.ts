// Operator roles (API.md, "Operators with names"; docs/decisions/0057-operator-roles.md). Every
// role reads; each mutating /admin route needs one role, named in api/operators/route-roles.ts.
// The database CHECKs the same list (migration 20261203140000_operators).
export const OPERATOR_ROLES = ['viewer', 'support', 'finance', 'catalogue', 'admin'] as const;
export type OperatorRole = (typeof OPERATOR_ROLES)[number];

/** What each role may change, as the API reference and /admin/v1/me say it. */
export const ROLE_DESCRIPTIONS: Record<OperatorRole, string> = {
  viewer: 'reads only',
  support: 'claims, webhook redelivery and endpoint recovery, reprocessing',
  finance: 'payout and statement runs, statement payments',
  catalogue: 'merchants, offers, budgets, audiences',
  admin: 'operators, issuers, issuer tokens, limits',
};

/** The break-glass account of OPERATOR_TOKEN: every role, audited as `root`. */
export const ROOT_OPERATOR_ID = 'root';

/** Who is calling an /admin route, set by the operator guard (api/middleware/auth.ts). */
export interface AuthenticatedOperator {
  /** op_... for a named operator, `root` for OPERATOR_TOKEN. */
  id: string;
  roles: readonly OperatorRole[];
}
