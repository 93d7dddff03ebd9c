import assert from 'node:assert/strict';
import { startTestApp, assertError, type TestApp } from '../helpers/app';

describe('operator API: issuers, tokens, audit log', () => {
  let app: TestApp;
  before(async () => (app = await startTestApp()));
  after(() => app.close());

  it('creates an issuer, reads it, changes it, and issues a working token', async () => {
    const created = await app.operator('POST', '/admin/v1/issuers', {
      name: 'Acme Bank',
      environment: 'production',
      brandedAvailabilityDelayDays: 2,
    });
    assert.equal(created.status, 201);
    assert.match(created.body.id, /^iss_/);
    assert.equal(created.body.environment, 'production');
    assert.equal(created.body.brandedAvailabilityDelayDays, 2);
    const read = await app.operator('GET', `/admin/v1/issuers/${created.body.id}`);
    assert.deepEqual(read.body, created.body);
    const patched = await app.operator('PATCH', `/admin/v1/issuers/${created.body.id}`, {
      brandedAvailabilityDelayDays: 5,
    });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.brandedAvailabilityDelayDays, 5);
    assert.equal(patched.body.environment, 'production');

    const token = await app.operator('POST', `/admin/v1/issuers/${created.body.id}/tokens`, { label: 'ci' });
    assert.equal(token.status, 201);
    assert.match(token.body.token, /^rwd_sk_[A-Za-z0-9_-]{43}$/);
    const use = await app.request('GET', '/api/v2/chg/chg_00000000-0000-0000-0000-000000000000', {
      token: token.body.token,
    });
    assert.equal(use.status, 404, 'the token authenticates');
    const unlabelled = await app.operator('POST', `/admin/v1/issuers/${created.body.id}/tokens`);
    assert.equal(unlabelled.status, 201, `no body means {}: ${unlabelled.text}`);
    assert.equal(unlabelled.body.label, null);
  });

  it('refuses to change the environment and validates every field', async () => {
    const created = await app.operator('POST', '/admin/v1/issuers', { name: 'Fixed', environment: 'sandbox' });
    assertError(
      await app.operator('PATCH', `/admin/v1/issuers/${created.body.id}`, { environment: 'production' }),
      400,
      'invalid_body',
    );
    assertError(await app.operator('PATCH', `/admin/v1/issuers/${created.body.id}`, {}), 400, 'invalid_body');
    assertError(
      await app.operator('POST', '/admin/v1/issuers', { name: 'X', environment: 'staging' }),
      400,
      'invalid_body',
    );
    assertError(
      await app.operator('POST', '/admin/v1/issuers', { name: '', environment: 'sandbox' }),
      400,
      'invalid_body',
    );
    assertError(
      await app.operator('POST', '/admin/v1/issuers', {
        name: 'X',
        environment: 'sandbox',
        brandedAvailabilityDelayDays: -1,
      }),
      400,
      'invalid_body',
    );
    assertError(
      await app.operator('GET', '/admin/v1/issuers/iss_00000000-0000-0000-0000-000000000000'),
      404,
      'issuer_not_found',
    );
    assertError(
      await app.operator('POST', '/admin/v1/issuers/iss_00000000-0000-0000-0000-000000000000/tokens', {}),
      404,
      'issuer_not_found',
    );
    assertError(await app.operator('GET', '/admin/v1/issuers/not-an-id'), 400, 'invalid_id');
  });

  it('keeps webhooks 30 days unless the operator sets 1 to 3650, and refuses anything else naming the field', async () => {
    const created = (await app.operator('POST', '/admin/v1/issuers', { name: 'Keeper', environment: 'sandbox' })).body;
    assert.equal(created.webhookRetentionDays, 30);
    const path = `/admin/v1/issuers/${created.id}`;
    for (const days of [1, 3650, 7]) {
      const patched = await app.operator('PATCH', path, { webhookRetentionDays: days });
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.body.webhookRetentionDays, days);
    }
    for (const days of [0, -1, 3651, 1.5, '30', null]) {
      const refused = await app.operator('PATCH', path, { webhookRetentionDays: days });
      assertError(refused, 400, 'invalid_body');
      assert.ok(
        refused.body.details.errors.some((e: { path: string }) => e.path === '/webhookRetentionDays'),
        `${JSON.stringify(days)}: ${refused.text}`,
      );
    }
    assert.equal((await app.operator('GET', path)).body.webhookRetentionDays, 7, 'a refused change changes nothing');
  });

  it('holds claim approvals above 50,000 unless the operator sets another threshold, 0 holding every one', async () => {
    const created = (await app.operator('POST', '/admin/v1/issuers', { name: 'Careful', environment: 'sandbox' })).body;
    assert.equal(created.approvalThresholdMinor, 50_000);
    const path = `/admin/v1/issuers/${created.id}`;
    for (const minor of [0, 1_000_000])
      assert.equal(
        (await app.operator('PATCH', path, { approvalThresholdMinor: minor })).body.approvalThresholdMinor,
        minor,
      );
    for (const minor of [-1, 1.5, null])
      assertError(await app.operator('PATCH', path, { approvalThresholdMinor: minor }), 400);
    assert.equal((await app.operator('GET', path)).body.approvalThresholdMinor, 1_000_000);
  });

  it('answers 404 when revoking a token through another issuer', async () => {
    const a = (await app.operator('POST', '/admin/v1/issuers', { name: 'A', environment: 'sandbox' })).body;
    const b = (await app.operator('POST', '/admin/v1/issuers', { name: 'B', environment: 'sandbox' })).body;
    const token = (await app.operator('POST', `/admin/v1/issuers/${a.id}/tokens`, {})).body;
    assertError(await app.operator('DELETE', `/admin/v1/issuers/${b.id}/tokens/${token.id}`), 404, 'token_not_found');
  });

  it('records every operator change in the audit log, newest first, paginated', async () => {
    const created = (await app.operator('POST', '/admin/v1/issuers', { name: 'Audited', environment: 'sandbox' })).body;
    const token = (await app.operator('POST', `/admin/v1/issuers/${created.id}/tokens`, { label: 'x' })).body;
    await app.operator('DELETE', `/admin/v1/issuers/${created.id}/tokens/${token.id}`);
    const page = await app.operator('GET', '/admin/v1/audit-log?limit=3');
    assert.equal(page.status, 200);
    assert.deepEqual(
      page.body.data.map((e: any) => [e.action, e.targetId]),
      [
        ['token.revoke', token.id],
        ['token.create', token.id],
        ['issuer.create', created.id],
      ],
    );
    assert.equal(page.body.data[0].actor, 'root');
    // What changed, not only that something did.
    assert.deepEqual(
      page.body.data.map((e: any) => e.details),
      [{ issuerId: created.id }, { issuerId: created.id, label: 'x' }, { name: 'Audited', environment: 'sandbox' }],
    );
    await app.operator('PATCH', `/admin/v1/issuers/${created.id}`, { brandedAvailabilityDelayDays: 3 });
    const update = (await app.operator('GET', '/admin/v1/audit-log?limit=1')).body.data[0];
    assert.deepEqual(
      [update.action, update.targetId, update.details],
      ['issuer.update', created.id, { brandedAvailabilityDelayDays: 3 }],
    );
    assert.ok(!JSON.stringify(page.body).includes(token.token), 'secrets never reach the audit log');
    const next = await app.operator('GET', `/admin/v1/audit-log?limit=3&cursor=${page.body.nextCursor}`);
    assert.equal(next.status, 200);
    const seen = new Set(page.body.data.map((e: any) => e.id));
    assert.ok(
      next.body.data.every((e: any) => !seen.has(e.id)),
      'pages do not overlap',
    );
    assertError(await app.operator('GET', '/admin/v1/audit-log?cursor=garbage'), 400, 'invalid_query');
    assertError(await app.operator('GET', '/admin/v1/audit-log?limit=0'), 400, 'invalid_query');
    const forged = Buffer.from(JSON.stringify(['not-a-date', 'x'])).toString('base64url');
    assertError(await app.operator('GET', `/admin/v1/audit-log?cursor=${forged}`), 400, 'invalid_query');
  });
});
