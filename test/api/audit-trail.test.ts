// The audit trail (API.md, "Operators with names"; decision 0058): one row per mutating operator
// call whatever its outcome, rows the service's role cannot change, a chain the verifier checks
// and breaks at the first row tampered with.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ROUTE_ACTIONS } from '../../api/audit/route-actions';
import { ROUTE_ROLES } from '../../api/operators/route-roles';
import { nameOperator } from '../helpers/operators';
import { rowHash, verifyAuditChain, type ChainRow } from '../../core/domain/audit-chain';
import { poolOf } from '../../prisma/client';
import { assertError, OPERATOR_TOKEN, startTestApp, type TestApp, type TestResponse } from '../helpers/app';
import { declaredRoutes, fillPath } from '../helpers/routes';
import { uniq } from '../helpers/groups';

describe('the audit trail', () => {
  let app: TestApp;
  before(async () => (app = await startTestApp()));
  after(() => app.close());

  /** A call with its own request id, and the trail's rows carrying that id. */
  async function traced(
    token: string,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) {
    const requestId = `audit-${randomUUID()}`;
    const res = await app.request(method.toUpperCase(), path, {
      token,
      body,
      headers: { 'x-request-id': requestId, 'user-agent': 'audit-trail-test/1', ...headers },
    });
    const rows = await app.db.operatorAuditLog.findMany({ where: { requestId } });
    return { res, rows };
  }

  const oneRow = (r: { res: TestResponse; rows: unknown[] }, what: string) =>
    assert.equal(r.rows.length, 1, `${what}: ${r.rows.length} rows for one call (${r.res.status} ${r.res.text})`);

  it('names an action for exactly the mutating /admin routes', () => {
    const mutating = declaredRoutes()
      .filter((r) => r.auth === 'operator' && r.method !== 'get')
      .map((r) => r.operationId)
      .sort();
    assert.deepEqual(Object.keys(ROUTE_ACTIONS).sort(), mutating);
  });

  it('writes one row for every mutating /admin route refused by role, and one for each that fails', async () => {
    const viewer = await nameOperator(app, ['viewer']);
    const mutating = declaredRoutes().filter((r) => r.auth === 'operator' && r.method !== 'get');
    for (const route of mutating) {
      const path = fillPath(route);
      const body = route.method === 'delete' ? undefined : { unexpected: true };
      const headers = { 'idempotency-key': randomUUID() };

      const refused = await traced(viewer.token, route.method, path, body, headers);
      oneRow(refused, `${route.operationId} refused`);
      if (ROUTE_ROLES[route.operationId] === 'approval') {
        // Deciding an approval needs the held call's role, read from the approval: none here.
        assertError(refused.res, 404, 'approval_not_found');
        assert.equal(refused.rows[0].outcome, 'failed');
        continue;
      }
      assertError(refused.res, 403, 'forbidden_role');
      const [denied] = refused.rows;
      assert.equal(denied.outcome, 'denied');
      assert.equal(denied.statusCode, 403);
      assert.equal(denied.action, ROUTE_ACTIONS[route.operationId]);
      assert.equal(denied.actor, viewer.id);
      assert.deepEqual(denied.operatorRoles, ['viewer']);
      assert.equal(denied.userAgent, 'audit-trail-test/1');
      assert.ok(denied.ip, 'the caller address');

      // As root, the same call fails: a body no route takes, or a record that does not exist.
      const failed = await traced(OPERATOR_TOKEN, route.method, path, body, headers);
      assert.ok(failed.res.status >= 400 && failed.res.status !== 403, `${route.operationId}: ${failed.res.status}`);
      oneRow(failed, `${route.operationId} failed`);
      assert.equal(failed.rows[0].outcome, 'failed');
      assert.equal(failed.rows[0].statusCode, failed.res.status);
      assert.equal(failed.rows[0].actor, 'root');
      assert.equal(
        (failed.rows[0].details as { error?: string }).error,
        failed.res.body.reasonCode ?? failed.res.body.name,
        `${route.operationId}: ${JSON.stringify(failed.rows[0].details)}`,
      );
    }
  });

  it('writes one row, with what changed, for each call that changes something', async () => {
    const admin = await nameOperator(app, ['admin', 'catalogue']);
    const done = async (method: string, path: string, body: unknown, action: string) => {
      const call = await traced(admin.token, method, path, body);
      assert.ok(call.res.status < 300, `${action}: ${call.res.status} ${call.res.text}`);
      oneRow(call, action);
      const [row] = call.rows;
      assert.equal(row.outcome, 'done');
      assert.equal(row.action, action);
      assert.equal(row.actor, admin.id);
      assert.deepEqual(row.operatorRoles, ['admin', 'catalogue']);
      return { res: call.res, row };
    };
    const issuer = await done(
      'POST',
      '/admin/v1/issuers',
      { name: uniq('Audit bank'), environment: 'sandbox' },
      'issuer.create',
    );
    const issuerId = issuer.res.body.id as string;
    assert.equal(issuer.row.targetId, issuerId);
    await done('PATCH', `/admin/v1/issuers/${issuerId}`, { name: uniq('Audit bank renamed') }, 'issuer.update');
    const token = await done('POST', `/admin/v1/issuers/${issuerId}/tokens`, { label: 'audit' }, 'token.create');
    assert.ok(!JSON.stringify(token.row.details).includes(token.res.body.token), 'no secret in the trail');
    await done('DELETE', `/admin/v1/issuers/${issuerId}/tokens/${token.res.body.id}`, undefined, 'token.revoke');
    const merchant = await done(
      'POST',
      '/admin/v1/merchants',
      { name: uniq('Audit shop'), category: 'dining' },
      'merchant.create',
    );
    const merchantId = merchant.res.body.id as string;
    await done('PATCH', `/admin/v1/merchants/${merchantId}`, { name: uniq('Audit shop renamed') }, 'merchant.update');
    const email = `${uniq('audited').toLowerCase()}@example.com`;
    const op = await done(
      'POST',
      '/admin/v1/operators',
      { name: 'Audited', email, roles: ['viewer'] },
      'operator.create',
    );
    await done('PATCH', `/admin/v1/operators/${op.res.body.id}`, { roles: ['support'] }, 'operator.update');
    await done('POST', `/admin/v1/operators/${op.res.body.id}/tokens`, undefined, 'operator.token.rotate');
  });

  it("refuses the service's role UPDATE, DELETE and TRUNCATE on the trail", async () => {
    await app.operator('POST', '/admin/v1/merchants', { name: uniq('Append shop'), category: 'dining' });
    const [row] = await app.db.operatorAuditLog.findMany({ orderBy: { seq: 'desc' }, take: 1 });
    await assert.rejects(
      app.db.$executeRawUnsafe(`UPDATE operator_audit_log SET action = 'x' WHERE id = '${row.id}'`),
      /append-only/,
    );
    await assert.rejects(
      app.db.$executeRawUnsafe(`DELETE FROM operator_audit_log WHERE id = '${row.id}'`),
      /append-only/,
    );
    await assert.rejects(app.db.$executeRawUnsafe('TRUNCATE operator_audit_log'), /append-only/);
    assert.equal((await app.db.operatorAuditLog.findUnique({ where: { id: row.id } }))?.action, row.action);
  });

  it('verifies the chain, and names the first row edited, deleted or inserted behind its back', async () => {
    for (let i = 0; i < 5; i++)
      await app.operator('POST', '/admin/v1/merchants', { name: uniq('Chain shop'), category: 'dining' });
    const verified = await app.operator('GET', '/admin/v1/audit-log/verify');
    assert.equal(verified.status, 200, verified.text);
    assert.equal(verified.body.ok, true, JSON.stringify(verified.body));
    assert.ok(verified.body.rows >= 5);
    const pool = poolOf(app.db);
    const rows = (
      await pool.query<ChainRow>(
        `SELECT seq::text, id, ((extract(epoch FROM created_at) * 1000)::bigint)::text AS at_ms, actor,
                array_to_string(operator_roles, ',') AS roles, action, target_id, outcome, status_code::text,
                request_id, ip, user_agent, details::text AS details, prev_hash, hash
           FROM operator_audit_log l ORDER BY l.seq DESC LIMIT 3`,
      )
    ).rows.reverse();
    const [first, middle, last] = rows;
    assert.equal(rowHash(middle), middle.hash, 'the database and the verifier hash alike');

    // Only the table's owner can switch the guard off: it stands for a DBA or an intruder.
    const tamper = async (sql: string, params: unknown[] = []) => {
      const client = await pool.connect();
      try {
        await client.query('ALTER TABLE operator_audit_log DISABLE TRIGGER USER');
        await client.query(sql, params);
      } finally {
        await client.query('ALTER TABLE operator_audit_log ENABLE TRIGGER USER');
        client.release();
      }
    };
    const expectBreak = async (id: string | undefined, reason: string) => {
      const verdict = await verifyAuditChain(pool);
      assert.equal(verdict.ok, false);
      assert.equal(verdict.reason, reason);
      assert.equal(verdict.firstBrokenId, id);
      const route = await app.operator('GET', '/admin/v1/audit-log/verify');
      assert.equal(route.body.firstBrokenId, id);
    };

    // Edited: the row's own fields no longer give its hash.
    await tamper(`UPDATE operator_audit_log SET action = 'merchant.delete' WHERE id = $1`, [middle.id]);
    await expectBreak(middle.id, 'edited');
    await tamper(`UPDATE operator_audit_log SET action = $2 WHERE id = $1`, [middle.id, middle.action]);
    assert.equal((await verifyAuditChain(pool)).ok, true, 'put back');

    // Deleted: the next row's place follows a gap; the last row deleted, the chain ends before its head.
    const putBack = async (id: string, remove: () => Promise<void>) => {
      const saved = (await pool.query('SELECT * FROM operator_audit_log WHERE id = $1', [id])).rows[0];
      await remove();
      const columns = Object.keys(saved);
      await tamper(
        `INSERT INTO operator_audit_log (${columns.map((c) => `"${c}"`).join(', ')})
         VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')})`,
        columns.map((c) => (c === 'details' ? JSON.stringify(saved[c]) : saved[c])),
      );
      assert.equal((await verifyAuditChain(pool)).ok, true, 'put back');
    };
    await putBack(middle.id, async () => {
      await tamper('DELETE FROM operator_audit_log WHERE id = $1', [middle.id]);
      await expectBreak(last.id, 'gap');
    });
    await putBack(last.id, async () => {
      await tamper('DELETE FROM operator_audit_log WHERE id = $1', [last.id]);
      await expectBreak(middle.id, 'head');
    });

    // Replaced: a forged row in the middle's place, hashed right for itself, does not link on.
    const forged = { ...middle, action: 'merchant.delete', prev_hash: first.hash };
    await tamper(`UPDATE operator_audit_log SET action = $2, hash = $3 WHERE id = $1`, [
      middle.id,
      forged.action,
      rowHash(forged),
    ]);
    await expectBreak(last.id, 'link');
    await tamper(`UPDATE operator_audit_log SET action = $2, hash = $3 WHERE id = $1`, [
      middle.id,
      middle.action,
      middle.hash,
    ]);

    // Inserted at the end, chained and hashed as the database would: the head the database keeps says otherwise.
    const extra = {
      ...last,
      seq: String(Number(last.seq) + 1),
      id: `aud_${randomUUID()}`,
      prev_hash: last.hash,
      action: 'issuer.delete',
    };
    const extraHash = rowHash(extra);
    await tamper(
      `INSERT INTO operator_audit_log (id, seq, actor, action, details, created_at, prev_hash, hash)
       SELECT $1, $2::bigint, actor, $3, details, created_at, $4, $5 FROM operator_audit_log WHERE id = $6`,
      [extra.id, extra.seq, extra.action, extra.prev_hash, extraHash, last.id],
    );
    await expectBreak(extra.id, 'head');
    await tamper('DELETE FROM operator_audit_log WHERE id = $1', [extra.id]);
    assert.equal((await verifyAuditChain(pool)).ok, true, 'put back');
  });

  it('filters by actor, action, target and time, and exports the chain as NDJSON', async () => {
    const op = await nameOperator(app, ['catalogue']);
    const created = await app.request('POST', '/admin/v1/merchants', {
      token: op.token,
      body: { name: uniq('Filter shop'), category: 'dining' },
    });
    const merchantId = created.body.id as string;
    await app.request('PATCH', `/admin/v1/merchants/${merchantId}`, {
      token: op.token,
      body: { name: uniq('Renamed') },
    });
    const mine = await app.operator('GET', `/admin/v1/audit-log?actor=${op.id}`);
    assert.deepEqual(
      mine.body.data.map((e: { action: string }) => e.action),
      ['merchant.update', 'merchant.create'],
    );
    const target = await app.operator('GET', `/admin/v1/audit-log?targetId=${merchantId}&action=merchant.update`);
    assert.equal(target.body.data.length, 1);
    const later = await app.operator('GET', `/admin/v1/audit-log?actor=${op.id}&from=2999-01-01T00:00:00Z`);
    assert.deepEqual(later.body.data, []);
    assertError(
      await app.operator('GET', '/admin/v1/audit-log?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z'),
      400,
      'invalid_query',
    );

    const exported = await app.request('GET', `/admin/v1/audit-log?format=ndjson&actor=${op.id}`, {
      token: OPERATOR_TOKEN,
    });
    assert.equal(exported.status, 200);
    assert.match(exported.headers.get('content-type') ?? '', /application\/x-ndjson/);
    const lines = exported.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.map((l) => l.action),
      ['merchant.create', 'merchant.update'],
      'the chain order, oldest first',
    );
    assert.ok(lines[0].seq < lines[1].seq && lines[1].hash.length === 64);
  });
});
