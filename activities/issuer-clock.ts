// A sandbox issuer's test clock, as activities read it. The workflow passes its own
// clock (server time, the same on every retry); an issuer whose clock was advanced
// (POST /api/v2/sandbox/clock/advance) decides and dates its postings that far ahead.
// The settlement and preview steps read the offset in their first statement
// (lifecycle/context.ts); the rare paths (refund, expiry) ask with this.
import type { SqlTx } from '../prisma/sql-transaction';

type Reader = Pick<SqlTx, '$queryRaw'>;

/** The issuer's clock offset in milliseconds; 0 for production issuers (a database CHECK). */
export async function issuerClockOffsetMs(db: Reader, issuerId: string): Promise<number> {
  const [row] = await db.$queryRaw<
    Array<{ offset: number }>
  >`SELECT clock_offset_ms::float8 AS "offset" FROM issuer WHERE id = ${issuerId}`;
  return row?.offset ?? 0;
}

/** `at` (the workflow's clock) on the issuer's clock. */
export async function issuerClockAt(db: Reader, issuerId: string, at: Date): Promise<Date> {
  const offset = await issuerClockOffsetMs(db, issuerId);
  return offset === 0 ? at : new Date(at.getTime() + offset);
}
