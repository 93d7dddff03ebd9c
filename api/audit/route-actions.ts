// What the audit trail calls each mutating operator route's action: the names the handlers' own
// entries have always used, so that one filter by action finds a call whatever its outcome,
// the refused and failed ones (written by api/audit/operator-calls.ts) beside the done ones
// (written by the handler with the change). A mutating /admin route missing here cannot be
// mounted (api/route.ts), and test/api/audit-trail.test.ts walks them all.
export const ROUTE_ACTIONS: Record<string, string> = {
  approveClaim: 'claim.approve',
  rejectClaim: 'claim.reject',
  adminReplayWebhook: 'webhook.replay',
  reprocessTransaction: 'transaction.reprocess',
  createStatementRun: 'statement_run.create',
  payStatement: 'statement.payment',
  createMerchant: 'merchant.create',
  updateMerchant: 'merchant.update',
  createOffer: 'offer.create',
  updateOffer: 'offer.update',
  createOperator: 'operator.create',
  updateOperator: 'operator.update',
  rotateOperatorToken: 'operator.token.rotate',
  createIssuer: 'issuer.create',
  updateIssuer: 'issuer.update',
  createIssuerToken: 'token.create',
  revokeIssuerToken: 'token.revoke',
  approveApproval: 'approval.approve',
  rejectApproval: 'approval.reject',
};

/** The route's action, and the path parameter naming its target (the last one, if any). */
export function routeAction(route: { operationId: string; path: string }): { action: string; targetParam?: string } {
  const action = ROUTE_ACTIONS[route.operationId];
  if (action === undefined) throw new Error(`${route.operationId}: no audit action in api/audit/route-actions.ts`);
  const params = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  return { action, targetParam: params.at(-1) };
}
