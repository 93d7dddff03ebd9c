// Four eyes (API.md, "Operators with names"; decision 0059): a held call does nothing until a
// second operator with its role approves it, then runs once; the maker cannot approve, two
// approvers racing carry it out once, and the database refuses a checker who is the maker.
import assert from 'node:assert/strict';
import { BUDGET_RAISE_LIMIT_MINOR } from '../../core/rules/four-eyes';
import { assertError, startTestApp, type TestApp } from '../helpers/app';
import { createMerchant, createOffer } from '../helpers/catalogue';
import { checkerAdmin, nameOperator, type NamedOperator } from '../helpers/operators';

describe('four eyes', () => {
  let app: TestApp;
  let maker: NamedOperator;
  let checker: NamedOperator;
  let support: NamedOperator;
  before(async () => {
    app = await startTestApp();
    maker = await nameOperator(app, ['catalogue'], 'Maker');
    checker = await nameOperator(app, ['catalogue'], 'Checker');
    support = await nameOperator(app, ['support'], 'Support');
  });
  after(() => app.close());

  async function budgetedOffer(budgetMinor = 5_000_000) {
    const merchant = await createMerchant(app);
    const offer = await createOffer(app, merchant.id, { budgetMinor, budgetPeriod: 'month' });
    return { merchant, offer, path: `/admin/v1/merchants/${merchant.id}/offers/${offer.id}` };
  }
  /** Whether the approval is in the pending queue, read page by page as its reader would. */
  async function inQueue(reader: NamedOperator, approvalId: string): Promise<boolean> {
    let path: string | undefined = '/admin/v1/approvals?status=pending&limit=100';
    while (path) {
      const page = await reader.call('GET', path);
      assert.equal(page.status, 200, page.text);
      if (page.body.data.some((a: { approvalId: string }) => a.approvalId === approvalId)) return true;
      path = page.body.nextCursor
        ? `/admin/v1/approvals?status=pending&limit=100&cursor=${page.body.nextCursor}`
        : undefined;
    }
    return false;
  }
  const budgetOf = async (path: string) => (await app.operator('GET', path)).body.budgetMinor as number | null;

  it('holds a budget raised past the limit: nothing changes until another operator with the role approves', async () => {
    const { path, offer } = await budgetedOffer();
    const small = await maker.call('PATCH', path, { budgetMinor: 5_000_000 + BUDGET_RAISE_LIMIT_MINOR });
    assert.equal(small.status, 200, 'a raise within the limit goes through');
    const held = await maker.call('PATCH', path, { budgetMinor: 9_000_000 });
    assert.equal(held.status, 202, held.text);
    assert.deepEqual(Object.keys(held.body).sort(), ['approvalId', 'reason', 'requiredRole', 'status']);
    assert.deepEqual(
      [held.body.status, held.body.reason, held.body.requiredRole],
      ['pending', 'budget_raise', 'catalogue'],
    );
    assert.equal(await budgetOf(path), 5_000_000 + BUDGET_RAISE_LIMIT_MINOR, 'nothing done');
    const id = held.body.approvalId as string;

    assert.ok(await inQueue(support, id), 'every role reads the queue');
    assertError(await maker.call('POST', `/admin/v1/approvals/${id}/approve`), 409, 'same_operator');
    assertError(await support.call('POST', `/admin/v1/approvals/${id}/approve`), 403, 'forbidden_role');
    assert.equal(await budgetOf(path), 5_000_000 + BUDGET_RAISE_LIMIT_MINOR, 'still nothing done');

    const approved = await checker.call('POST', `/admin/v1/approvals/${id}/approve`);
    assert.equal(approved.status, 200, approved.text);
    assert.deepEqual(
      [approved.body.status, approved.body.makerId, approved.body.checkerId, approved.body.result.statusCode],
      ['approved', maker.id, checker.id, 200],
    );
    assert.equal(approved.body.result.body.budgetMinor, 9_000_000);
    assert.equal(await budgetOf(path), 9_000_000, 'carried out');
    assertError(await checker.call('POST', `/admin/v1/approvals/${id}/approve`), 409, 'approval_not_pending');
    assert.equal(await inQueue(support, id), false, 'decided: out of the queue');

    // The trail: the maker's call pending, the checker's approval, the change naming both.
    const rows = await app.db.operatorAuditLog.findMany({
      where: { OR: [{ targetId: offer.id }, { targetId: id }] },
      orderBy: { seq: 'asc' },
    });
    const held_ = rows.find((r) => r.outcome === 'pending');
    assert.deepEqual(
      [held_?.actor, held_?.action, (held_?.details as { approvalId?: string }).approvalId],
      [maker.id, 'offer.update', id],
    );
    const approval = rows.find((r) => r.action === 'approval.approve' && r.outcome === 'done');
    assert.equal(approval?.actor, checker.id);
    const change = rows.filter(
      (r) =>
        r.outcome === null && r.action === 'offer.update' && (r.details as { approvalId?: string }).approvalId === id,
    );
    assert.equal(change.length, 1);
    assert.deepEqual([change[0].actor, (change[0].details as { makerId?: string }).makerId], [checker.id, maker.id]);
  });

  it('carries a held call out once when two operators approve it at the same time', async () => {
    const { path } = await budgetedOffer();
    const held = await maker.call('PATCH', path, { budgetMinor: 20_000_000 });
    const other = await nameOperator(app, ['catalogue'], 'Other');
    const answers = await Promise.all([
      checker.call('POST', `/admin/v1/approvals/${held.body.approvalId}/approve`),
      other.call('POST', `/admin/v1/approvals/${held.body.approvalId}/approve`),
    ]);
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 409]);
    assertError(
      answers.find((a) => a.status === 409)!,
      409,
      'approval_not_pending',
    );
    assert.equal(await budgetOf(path), 20_000_000);
  });

  it('never carries out a rejected call', async () => {
    const { path } = await budgetedOffer();
    const held = await maker.call('PATCH', path, { budgetMinor: null });
    assert.equal(held.status, 202, 'removing a budget is a raise without bound');
    assertError(await maker.call('POST', `/admin/v1/approvals/${held.body.approvalId}/reject`), 409, 'same_operator');
    const rejected = await checker.call('POST', `/admin/v1/approvals/${held.body.approvalId}/reject`);
    assert.deepEqual([rejected.status, rejected.body.status, rejected.body.result], [200, 'rejected', null]);
    assertError(
      await checker.call('POST', `/admin/v1/approvals/${held.body.approvalId}/approve`),
      409,
      'approval_not_pending',
    );
    assert.equal(await budgetOf(path), 5_000_000);
  });

  it('refuses, in the database, an approval decided by its maker', async () => {
    const { path } = await budgetedOffer();
    const held = await maker.call('PATCH', path, { budgetMinor: 30_000_000 });
    await assert.rejects(
      app.db.$executeRawUnsafe(
        `UPDATE approval SET status = 'approving', checker_id = maker_id, decided_at = now() WHERE id = '${held.body.approvalId}'`,
      ),
      /approval_checker_not_maker_check/,
    );
  });

  it('holds a new admin while an admin exists, and shows the new token once, to the approver', async () => {
    const admin = await checkerAdmin(app);
    const email = `new-admin-${Date.now().toString(36)}@example.com`;
    const held = await app.operator('POST', '/admin/v1/operators', { name: 'New admin', email, roles: ['admin'] });
    assert.equal(held.status, 202, held.text);
    assert.equal(await app.db.operator.count({ where: { email } }), 0, 'nobody named yet');
    const approved = await admin.call('POST', `/admin/v1/approvals/${held.body.approvalId}/approve`);
    assert.equal(approved.status, 200, approved.text);
    assert.match(approved.body.result.body.token, /^rwd_op_/);
    const again = await admin.call('GET', `/admin/v1/approvals/${held.body.approvalId}`);
    assert.equal(again.body.result.body.token, undefined, 'the token is not kept');
    assert.equal(again.body.result.body.id, approved.body.result.body.id);
    const stored = await app.db.approval.findUniqueOrThrow({ where: { id: held.body.approvalId } });
    assert.ok(!JSON.stringify(stored).includes(approved.body.result.body.token), 'no secret at rest');
    // A viewer is no new admin.
    const viewer = await app.operator('POST', '/admin/v1/operators', {
      name: 'Viewer',
      email: `viewer-${Date.now().toString(36)}@example.com`,
      roles: ['viewer'],
    });
    assert.equal(viewer.status, 201);
  });

  it('answers 404 for an approval that does not exist', async () => {
    const missing = 'apr_01a23b3a-0000-7000-8000-000000000000';
    assertError(await checker.call('GET', `/admin/v1/approvals/${missing}`), 404, 'approval_not_found');
    assertError(await checker.call('POST', `/admin/v1/approvals/${missing}/approve`), 404, 'approval_not_found');
  });
});
