// The notices phase's reading of what it measured (bench/notice-figures.ts): the run's own
// statements among everything PostgreSQL counted, and the instant the run scanned at.
import assert from 'node:assert/strict';
import { classifyStatements, scanInstant } from '../../bench/notice-figures';

describe('bench/notice-figures', () => {
  it("counts the scan's and the expiry batch's statements as the run's, and the rest apart", () => {
    const count = classifyStatements([
      { query: 'BEGIN', calls: 7 },
      { query: 'SET LOCAL statement_timeout = $1', calls: 6 },
      {
        query:
          'SELECT g.id, g.issuer_id AS "issuerId" FROM reward_grant g JOIN issuer i ON i.id = g.issuer_id WHERE g.next_notice_at IS NOT NULL ORDER BY g.next_notice_at LIMIT $1 FOR UPDATE OF g SKIP LOCKED',
        calls: 6,
      },
      { query: 'WITH candidate AS (\n SELECT * FROM unnest($1::text[]) AS c(id)), written AS (...)', calls: 5 },
      { query: 'SELECT pg_notify($1, $2)', calls: 5 },
      { query: 'UPDATE reward_grant g\n   SET available_noticed_at = $1', calls: 5 },
      {
        query:
          'SELECT "public"."reward_grant"."id" FROM "public"."reward_grant" WHERE ("public"."reward_grant"."expires_at" <= $1 AND "public"."reward_grant"."remaining_minor" > $2)',
        calls: 1,
      },
      { query: 'COMMIT', calls: 7 },
      { query: 'WITH recorded AS (\n INSERT INTO webhook_attempt (id, webhook_id) VALUES ($1, $2))', calls: 224 },
      { query: 'SELECT pg_stat_statements_reset()', calls: 1 },
    ]);
    assert.equal(count.run, 42);
    assert.equal(count.all, 266, 'every statement but the bench’s own reset and read');
    assert.deepEqual(
      count.byStatement.filter((s) => !s.run).map((s) => s.calls),
      [224],
    );
  });

  it('reads the instant from the first scheduled activity’s input', () => {
    const input = (value: unknown) => ({
      input: { payloads: [{ metadata: {}, data: Buffer.from(JSON.stringify(value)).toString('base64') }] },
    });
    const history = {
      events: [
        { eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED', workflowExecutionStartedEventAttributes: {} },
        {
          eventType: 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED',
          activityTaskScheduledEventAttributes: input({ atMs: 1_795_626_167_197, batchSize: 200 }),
        },
        {
          eventType: 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED',
          activityTaskScheduledEventAttributes: input({ atMs: 1, batchSize: 200 }),
        },
      ],
    };
    assert.equal(scanInstant(history), 1_795_626_167_197);
    assert.throws(() => scanInstant({ events: [] }), /scheduled no activity/);
  });
});
