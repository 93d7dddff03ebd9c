// Every list of kinds the code knows is the list its column's CHECK allows, in the migrated
// database: a webhook type, reward event type, transfer or account kind, or adjustment reason added
// to the code without its migration (or to a migration without the code) fails here, before a
// posting or a webhook of that kind fails in production. CONTRIBUTING.md, "Add a webhook type",
// lists every place a type lives; this test, the docs' lists test (test/docs/lists.test.ts) and
// the compiler (Records keyed by the type: data schema, example, description) check them.
import assert from 'node:assert/strict';
import pg from 'pg';
import { testDatabaseUrl } from '../helpers/env';
import { WEBHOOK_TYPES } from '../../core/webhooks/payloads';
import { ACCOUNT_KINDS, REWARD_EVENT_TYPES, TRANSFER_KINDS } from '../../core/ledger';
import { ADJUSTMENT_REASON_CODES } from '../../core/rules/adjustments';
import { OPERATOR_ROLES } from '../../api/operators/roles';
import { APPROVAL_STATUSES } from '../../api/approvals/schemas';
import { AUDIT_OUTCOMES } from '../../api/audit/operator-calls';

/** Each code list beside the CHECK that must allow exactly its values. */
const LISTS: Array<{ table: string; constraint: string; values: readonly string[] }> = [
  { table: 'webhook', constraint: 'webhook_type_check', values: WEBHOOK_TYPES },
  { table: 'reward_event', constraint: 'reward_event_type_check', values: REWARD_EVENT_TYPES },
  { table: 'ledger_transfer', constraint: 'ledger_transfer_kind_check', values: TRANSFER_KINDS },
  { table: 'ledger_account', constraint: 'ledger_account_kind_check', values: ACCOUNT_KINDS },
  { table: 'adjustment', constraint: 'adjustment_reason_code_check', values: ADJUSTMENT_REASON_CODES },
  { table: 'operator', constraint: 'operator_roles_check', values: OPERATOR_ROLES },
  { table: 'approval', constraint: 'approval_status_check', values: APPROVAL_STATUSES },
  { table: 'operator_audit_log', constraint: 'operator_audit_log_outcome_check', values: AUDIT_OUTCOMES },
];

/** The string literals a CHECK's definition allows (`type = ANY (ARRAY['a'::text, ...])`). */
export function allowedValues(definition: string): string[] {
  return [...definition.matchAll(/'([^']+)'::text/g)].map((m) => m[1]);
}

/** What differs between a list and its CHECK, both ways; empty when they agree. */
export function differences(code: readonly string[], check: readonly string[]): string[] {
  return [
    ...code.filter((v) => !check.includes(v)).map((v) => `${v}: in the code, not allowed by the CHECK`),
    ...check.filter((v) => !code.includes(v)).map((v) => `${v}: allowed by the CHECK, unknown to the code`),
  ];
}

describe('kinds in the code and in the CHECKs of the migrated database', () => {
  let client: pg.Client;
  before(async () => {
    client = new pg.Client({ connectionString: testDatabaseUrl() });
    await client.connect();
  });
  after(() => client?.end());

  for (const { table, constraint, values } of LISTS) {
    it(`${table}.${constraint} allows exactly the code's list`, async () => {
      const { rows } = await client.query<{ definition: string }>(
        `SELECT pg_get_constraintdef(c.oid) AS definition FROM pg_constraint c
          WHERE c.conrelid = $1::regclass AND c.conname = $2`,
        [table, constraint],
      );
      assert.equal(rows.length, 1, `no ${constraint} on ${table}`);
      assert.deepEqual(differences(values, allowedValues(rows[0].definition)), []);
    });
  }

  it('names a type added to the code alone, and one added to a migration alone (the check can fail)', () => {
    const check = allowedValues("CHECK ((type = ANY (ARRAY['a'::text, 'b'::text, 'old'::text])))");
    assert.deepEqual(check, ['a', 'b', 'old']);
    assert.deepEqual(differences(['a', 'b', 'new'], check), [
      'new: in the code, not allowed by the CHECK',
      'old: allowed by the CHECK, unknown to the code',
    ]);
  });
});
