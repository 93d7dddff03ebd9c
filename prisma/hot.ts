// The hottest reads of the API run on the pool under Prisma as NAMED prepared statements:
// PostgreSQL parses and plans such a statement once per connection and then reuses its plan,
// where Prisma's raw queries are parsed and planned on every call (for a one-row lookup the
// planning costs more than the execution; bench/, EXPLAIN ANALYZE). Each statement's name is
// its identity: a different text needs a different name, hence the version suffix.
import type { QueryResultRow } from 'pg';
import { poolOf, type Db } from './client';

export interface HotStatement {
  name: string;
  text: string;
}

export async function hotQuery<R extends QueryResultRow>(
  db: Db,
  statement: HotStatement,
  values: unknown[],
): Promise<R[]> {
  const result = await poolOf(db).query<R>({ name: statement.name, text: statement.text, values });
  return result.rows;
}
