// Named operators for tests. Naming an admin while one exists is held for a second admin (four
// eyes); tests share one database, so whether one exists depends on the tests before. The helper
// approves such a call with a second admin it names straight through the store (as the first
// admin of a deployment, or the admin CLI's way back in, is named).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createOperator } from '../../api/operators/store';
import type { OperatorRole } from '../../api/operators/roles';
import type { TestApp, TestResponse } from './app';

export interface NamedOperator {
  id: string;
  token: string;
  roles: readonly string[];
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<TestResponse>;
}

function named(app: TestApp, id: string, token: string, roles: readonly string[]): NamedOperator {
  return {
    id,
    token,
    roles,
    call: (method, path, body, headers) => app.request(method, path, { token, body, headers }),
  };
}

/** An admin named outside the API: the second pair of eyes tests approve with. */
export async function checkerAdmin(app: TestApp, roles: OperatorRole[] = ['admin']): Promise<NamedOperator> {
  const email = `checker-${randomUUID()}@example.com`;
  const { operator, secret } = await createOperator(app.db, { name: 'Checker', email, roles }, 'test', new Date());
  return named(app, operator.id, secret, operator.roles);
}

/** An operator named by root through the API, approved by a second admin when held. */
export async function nameOperator(app: TestApp, roles: OperatorRole[], name = 'Operator'): Promise<NamedOperator> {
  const email = `op-${randomUUID()}@example.com`;
  const res = await app.operator('POST', '/admin/v1/operators', { name, email, roles });
  if (res.status === 201) return named(app, res.body.id, res.body.token, roles);
  assert.equal(res.status, 202, res.text);
  const checker = await checkerAdmin(app);
  const approved = await checker.call('POST', `/admin/v1/approvals/${res.body.approvalId}/approve`);
  assert.equal(approved.status, 200, approved.text);
  assert.equal(approved.body.result.statusCode, 201, approved.text);
  return named(app, approved.body.result.body.id, approved.body.result.body.token, roles);
}
