// The role table (api/operators/route-roles.ts) against the routes: every /admin route names the
// role it needs, every change needs a real one, no entry outlives its route, and /openapi.json
// shows each. Needs no database: a new mutating /admin route without a role fails here first.
import assert from 'node:assert/strict';
import { buildOpenApi } from '../../api/openapi';
import { ROUTE_ROLES, routeRole } from '../../api/operators/route-roles';
import { OPERATOR_ROLES } from '../../api/operators/roles';
import { declaredRoutes } from '../helpers/routes';

describe('operator route roles', () => {
  const routes = declaredRoutes();
  const operatorRoutes = routes.filter((r) => r.auth === 'operator');

  it('names a role for every /admin route, and every route under /admin is an operator route', () => {
    assert.ok(operatorRoutes.length >= 30, `only ${operatorRoutes.length} operator routes`);
    assert.deepEqual(
      routes.filter((r) => r.path.startsWith('/admin/') && r.auth !== 'operator').map((r) => r.operationId),
      [],
    );
    assert.deepEqual(
      operatorRoutes.filter((r) => !(r.operationId in ROUTE_ROLES)).map((r) => r.operationId),
      [],
      'routes without a role in api/operators/route-roles.ts',
    );
  });

  it('needs a role for every change and any role for a read', () => {
    for (const route of operatorRoutes) {
      const role = routeRole(route);
      if (route.method === 'get') assert.equal(role, 'any', route.operationId);
      // Deciding an approval needs the role of the call it holds (api/approvals/store.ts).
      else if (role === 'approval') assert.match(route.operationId, /^(approve|reject)Approval$/);
      else assert.ok((OPERATOR_ROLES as readonly string[]).includes(role), `${route.operationId}: ${role}`);
    }
  });

  it('holds no entry for a route that does not exist', () => {
    const declared = new Set(operatorRoutes.map((r) => r.operationId));
    assert.deepEqual(
      Object.keys(ROUTE_ROLES).filter((id) => !declared.has(id)),
      [],
    );
  });

  it('refuses to mount an operator route the table does not name', () => {
    assert.throws(() => routeRole({ operationId: 'deleteEverything', method: 'post' }), /no role/);
    assert.throws(() => routeRole({ operationId: 'approveClaim', method: 'get' }), /read must need any role/);
  });

  it('gives each role the routes API.md gives it', () => {
    const byRole = (role: string) =>
      Object.entries(ROUTE_ROLES)
        .filter(([, r]) => r === role)
        .map(([id]) => id)
        .sort();
    assert.deepEqual(byRole('viewer'), [], 'viewer reads only');
    assert.deepEqual(byRole('support'), ['adminReplayWebhook', 'approveClaim', 'rejectClaim', 'reprocessTransaction']);
    assert.deepEqual(byRole('finance'), ['createStatementRun', 'payStatement']);
    assert.deepEqual(byRole('catalogue'), ['createMerchant', 'createOffer', 'updateMerchant', 'updateOffer']);
    assert.deepEqual(byRole('admin'), [
      'createIssuer',
      'createIssuerToken',
      'createOperator',
      'revokeIssuerToken',
      'rotateOperatorToken',
      'updateIssuer',
      'updateOperator',
    ]);
  });

  it('shows the role of every operator operation in /openapi.json, and the 403 of every change', () => {
    const doc = buildOpenApi(routes, 'test') as {
      paths: Record<string, Record<string, { 'x-required-role'?: string; description?: string; responses: object }>>;
    };
    for (const route of operatorRoutes) {
      const op = doc.paths[route.path][route.method];
      assert.equal(op['x-required-role'], ROUTE_ROLES[route.operationId], route.operationId);
      assert.match(op.description ?? '', route.method === 'get' ? /Any operator role/ : /Needs the (operator )?role/);
      const forbidden = (op.responses as Record<string, { description?: string }>)['403'];
      if (route.method === 'get') continue;
      assert.match(
        forbidden?.description ?? '',
        /forbidden_role/,
        `${route.operationId} declares no 403 forbidden_role`,
      );
    }
  });
});
