// Named operators through the real stack (API.md, "Operators with names"): accounts and their
// tokens, roles checked before anything runs, a disabled operator or a rotated token refused at
// once, and root (OPERATOR_TOKEN) on until the deployment switches it off.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestApp, assertError, type TestApp, type TestResponse } from '../helpers/app';
import { uniq } from '../helpers/groups';
import { OPERATOR_ROLES, type OperatorRole } from '../../api/operators/roles';
import { createOperator } from '../../api/operators/store';
import { nameOperator, type NamedOperator } from '../helpers/operators';

/** One mutating route of each role, and what it answers when the role lets it through. */
const ROUTE_OF_ROLE: Record<
  Exclude<OperatorRole, 'viewer'>,
  { allowed: number; call(op: NamedOperator): Promise<TestResponse> }
> = {
  // No Temporal in this app: an approval that passes the role check gets as far as the engine.
  support: { allowed: 503, call: (op) => op.call('POST', `/admin/v1/claims/clm_${randomUUID()}/approve`, {}) },
  finance: {
    allowed: 404,
    call: (op) =>
      op.call(
        'POST',
        `/admin/v1/statements/stm_${randomUUID()}/payments`,
        { amountMinor: 100, reference: 'wire 1' },
        {
          'idempotency-key': randomUUID(),
        },
      ),
  },
  catalogue: {
    allowed: 201,
    call: (op) => op.call('POST', '/admin/v1/merchants', { name: uniq('Role shop'), category: 'dining' }),
  },
  admin: {
    allowed: 201,
    call: (op) => op.call('POST', '/admin/v1/issuers', { name: uniq('Role bank'), environment: 'sandbox' }),
  },
};

describe('operator accounts and roles', () => {
  let app: TestApp;
  before(async () => (app = await startTestApp()));
  after(() => app.close());

  it('names an operator, shows the token once, lists them, and tells each caller who they are', async () => {
    const email = `${uniq('Ada')}@Example.com`;
    const created = await app.operator('POST', '/admin/v1/operators', {
      name: 'Ada',
      email,
      roles: ['support', 'finance'],
    });
    assert.equal(created.status, 201, created.text);
    assert.match(created.body.id, /^op_/);
    assert.match(created.body.token, /^rwd_op_[A-Za-z0-9_-]{43}$/);
    assert.equal(created.body.email, email.toLowerCase());
    assert.equal(created.body.status, 'active');
    const stored = await app.db.operatorToken.findFirstOrThrow({ where: { operatorId: created.body.id } });
    assert.notEqual(stored.tokenHash, created.body.token, 'only the hash is stored');

    const page = await app.operator('GET', '/admin/v1/operators?limit=200');
    const listed = page.body.data.find((o: any) => o.id === created.body.id);
    assert.deepEqual(listed, omitToken(created.body));
    assert.equal(listed.token, undefined, 'the secret is never shown again');

    const me = await app.request('GET', '/admin/v1/me', { token: created.body.token });
    assert.deepEqual(me.body, {
      id: created.body.id,
      root: false,
      name: 'Ada',
      email: email.toLowerCase(),
      roles: ['support', 'finance'],
    });
    const root = await app.operator('GET', '/admin/v1/me');
    assert.deepEqual(root.body, { id: 'root', root: true, roles: [...OPERATOR_ROLES] });

    assertError(
      await app.operator('POST', '/admin/v1/operators', {
        name: 'Twin',
        email: email.toUpperCase(),
        roles: ['viewer'],
      }),
      409,
      'operator_email_taken',
    );
    assertError(
      await app.operator('POST', '/admin/v1/operators', { name: 'X', email: 'x@y.z', roles: [] }),
      400,
      'invalid_body',
    );
    assertError(
      await app.operator('POST', '/admin/v1/operators', { name: 'X', email: 'x@y.z', roles: ['owner'] }),
      400,
      'invalid_body',
    );
  });

  it('lets each role change only its own routes, refuses the rest with 403 forbidden_role and does nothing', async () => {
    for (const role of OPERATOR_ROLES) {
      const op = await nameOperator(app, [role]);
      const read = await op.call('GET', '/admin/v1/merchants?limit=1');
      assert.equal(read.status, 200, `${role} reads`);
      for (const [needed, route] of Object.entries(ROUTE_OF_ROLE)) {
        const before = await counts(app);
        const res = await route.call(op);
        if (needed === role) {
          assert.equal(res.status, route.allowed, `${role} on its own route: ${res.text}`);
          continue;
        }
        assertError(res, 403, 'forbidden_role');
        assert.equal(res.body.details.requiredRole, needed);
        assert.deepEqual(res.body.details.roles, [role]);
        assert.deepEqual(await counts(app), before, `${role} refused on a ${needed} route changed something`);
        const refusal = await app.db.operatorAuditLog.findFirst({
          where: { actor: op.id, outcome: 'denied' },
          orderBy: { seq: 'desc' },
        });
        assert.equal(refusal?.statusCode, 403, 'the refusal is audited');
        assert.deepEqual(refusal?.operatorRoles, [role]);
        assert.equal(
          (refusal?.details as { requiredRole?: string } | undefined)?.requiredRole,
          needed,
          'the refusal says what the operator lacked',
        );
      }
    }
  });

  it('audits a named operator under their id', async () => {
    const admin = await nameOperator(app, ['admin']);
    const name = uniq('Audited bank');
    assert.equal((await admin.call('POST', '/admin/v1/issuers', { name, environment: 'sandbox' })).status, 201);
    const issuer = await app.db.issuer.findFirstOrThrow({ where: { name } });
    const entry = await app.db.operatorAuditLog.findFirstOrThrow({
      where: { action: 'issuer.create', targetId: issuer.id },
    });
    assert.equal(entry.actor, admin.id);
  });

  it('refuses a disabled operator at once, and enabling again needs a new token', async () => {
    const op = await nameOperator(app, ['support']);
    assert.equal((await op.call('GET', '/admin/v1/me')).status, 200);
    const disabled = await app.operator('PATCH', `/admin/v1/operators/${op.id}`, { status: 'disabled' });
    assert.equal(disabled.status, 200, disabled.text);
    assert.equal(disabled.body.status, 'disabled');
    assertError(await op.call('GET', '/admin/v1/me'), 401, 'invalid_token');
    assertError(await op.call('GET', '/admin/v1/merchants'), 401, 'invalid_token');
    assertError(await app.operator('POST', `/admin/v1/operators/${op.id}/tokens`), 409, 'operator_disabled');

    assert.equal((await app.operator('PATCH', `/admin/v1/operators/${op.id}`, { status: 'active' })).status, 200);
    assertError(await op.call('GET', '/admin/v1/me'), 401, 'invalid_token');
    const rotated = await app.operator('POST', `/admin/v1/operators/${op.id}/tokens`);
    assert.equal(rotated.status, 201, rotated.text);
    assert.equal((await app.request('GET', '/admin/v1/me', { token: rotated.body.token })).status, 200);
  });

  it('changes roles with effect on the next call', async () => {
    const op = await nameOperator(app, ['viewer']);
    assertError(await ROUTE_OF_ROLE.catalogue.call(op), 403, 'forbidden_role');
    const patched = await app.operator('PATCH', `/admin/v1/operators/${op.id}`, { roles: ['viewer', 'catalogue'] });
    assert.deepEqual(patched.body.roles, ['viewer', 'catalogue']);
    assert.equal((await ROUTE_OF_ROLE.catalogue.call(op)).status, 201);
    assertError(
      await app.operator('PATCH', `/admin/v1/operators/op_${randomUUID()}`, { roles: ['admin'] }),
      404,
      'operator_not_found',
    );
  });

  it('rotates a token: the new one works and the old one is refused at once', async () => {
    const op = await nameOperator(app, ['finance']);
    const rotated = await app.operator('POST', `/admin/v1/operators/${op.id}/tokens`);
    assert.equal(rotated.status, 201, rotated.text);
    assert.notEqual(rotated.body.token, op.token);
    assertError(await op.call('GET', '/admin/v1/me'), 401, 'invalid_token');
    const me = await app.request('GET', '/admin/v1/me', { token: rotated.body.token });
    assert.equal(me.body.id, op.id);
    const live = await app.db.operatorToken.count({ where: { operatorId: op.id, revokedAt: null } });
    assert.equal(live, 1);
  });

  it('lets an operator rotate only with the admin role', async () => {
    const op = await nameOperator(app, ['support', 'finance', 'catalogue']);
    const res = await op.call('POST', `/admin/v1/operators/${op.id}/tokens`);
    assertError(res, 403, 'forbidden_role');
    assert.equal(res.body.details.requiredRole, 'admin');
    assert.equal((await op.call('GET', '/admin/v1/me')).status, 200, 'the refused rotation did nothing');
  });
});

describe('operator root switched off', () => {
  let app: TestApp;
  before(async () => (app = await startTestApp({ config: { operatorToken: undefined } })));
  after(() => app.close());

  it('refuses OPERATOR_TOKEN while named operators keep working, and keeps the last admin', async () => {
    assertError(await app.operator('GET', '/admin/v1/me'), 401, 'invalid_token');
    assertError(await app.operator('GET', '/admin/v1/merchants'), 401, 'invalid_token');
    // The first admin was named while root was on; the store is what that route ran.
    const email = `${uniq('first').toLowerCase()}@example.com`;
    const { operator, secret } = await createOperator(
      app.db,
      { name: 'First', email, roles: ['admin'] },
      'test',
      new Date(),
    );
    const me = await app.request('GET', '/admin/v1/me', { token: secret });
    assert.equal(me.body.id, operator.id);
    // Admins named by the tests above share this database: make this one the last active admin.
    await app.db.operator.updateMany({
      where: { id: { not: operator.id }, roles: { has: 'admin' } },
      data: { status: 'disabled' },
    });
    const self = (body: object) => app.request('PATCH', `/admin/v1/operators/${operator.id}`, { token: secret, body });
    assertError(await self({ status: 'disabled' }), 409, 'last_admin');
    assertError(await self({ roles: ['viewer'] }), 409, 'last_admin');
    assert.equal((await app.request('GET', '/admin/v1/me', { token: secret })).status, 200);
  });
});

function omitToken(body: Record<string, unknown>): Record<string, unknown> {
  const { token: _token, ...rest } = body;
  return rest;
}

/** What the sample routes would change: merchants, issuers, statement payments. */
async function counts(app: TestApp) {
  const [merchants, issuers, payments] = await Promise.all([
    app.db.merchant.count(),
    app.db.issuer.count(),
    app.db.statementPayment.count(),
  ]);
  return { merchants, issuers, payments };
}
