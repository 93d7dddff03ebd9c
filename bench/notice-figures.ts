// What the notices phase (bench/notices.ts) reads from what it measured, apart so that its
// unit tests need no stack: the instant a run scanned at, from its history, and which of the
// statements PostgreSQL counted meanwhile (pg_stat_statements) were the run's own.

export interface StatementCount {
  /** The ExpireGrants run's own: its scan batches' and its expiry batch's statements. */
  run: number;
  /** Every statement PostgreSQL ran meanwhile, from any client (the relay delivering too). */
  all: number;
  byStatement: Array<{ query: string; calls: number; run: boolean }>;
}

/** The `atMs` the run's first activity was given: the instant the whole run scans at. */
export function scanInstant(history: { events?: Array<Record<string, unknown>> }): number {
  for (const event of history.events ?? []) {
    const attributes = event.activityTaskScheduledEventAttributes as
      { input?: { payloads?: Array<{ data?: string }> } } | undefined;
    const data = attributes?.input?.payloads?.[0]?.data;
    if (data) return Number((JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as { atMs: number }).atMs);
  }
  throw new Error('notices: the run scheduled no activity');
}

// The run's statements: each scan batch's transaction (activities/notices/index.ts, with
// core/domain/webhook-records.ts): BEGIN, SET LOCAL, the lock, the records' insert, the NOTIFY,
// the update of the grants, COMMIT; and the expiry batch's transaction (BEGIN, the listing of
// expired grants, COMMIT; activities/expiry). BEGIN and COMMIT are counted whole: in this
// phase only the run's activities begin transactions (the relay's statements stand alone), so
// BEGIN's calls equal the run's activities (the results file lists every statement's calls).
const RUN_STATEMENTS = [
  /FROM reward_grant g JOIN issuer i ON i\.id = g\.issuer_id/,
  /WITH candidate AS \(/,
  /^\s*SELECT pg_notify\(/,
  /UPDATE reward_grant g\s+SET available_noticed_at/,
  /FROM "public"\."reward_grant" WHERE \("public"\."reward_grant"\."expires_at" <=/,
  /^\s*(BEGIN|COMMIT|ROLLBACK|SET LOCAL statement_timeout)\b/i,
];
// The bench's own: the reset and the read of the counts.
const BENCH_STATEMENTS = /pg_stat_statements/;

export function classifyStatements(rows: Array<{ query: string; calls: number }>): StatementCount {
  const byStatement = rows
    .filter((r) => !BENCH_STATEMENTS.test(r.query))
    .map((r) => ({ ...r, run: RUN_STATEMENTS.some((p) => p.test(r.query)) }))
    .sort((a, b) => b.calls - a.calls);
  const sum = (list: typeof byStatement) => list.reduce((n, r) => n + r.calls, 0);
  return { run: sum(byStatement.filter((r) => r.run)), all: sum(byStatement), byStatement };
}
