// The trial balance one page at a time, for ledgers with more accounts than one answer should
// carry. Accounts in the order of the whole trial balance (issuer, kind, id), keyset-paginated
// on that key; the page's accounts and the ledger's total come from ONE statement. The total is
// always of the whole ledger (or issuer): it is the trial balance's proof, and a page's own
// sum is not 0.
import type { Db } from '../../prisma/client';
import { Prisma } from '../../prisma/generated/client';
import { fromDbMinor, type AccountKind } from '../../core/ledger';
import type { TrialBalance } from '../../core/domain/trial-balance';
import { decodeCursor, toPage } from '../pagination';
import { errors } from '../../core/errors';

interface Row {
  id: string;
  kind: AccountKind;
  issuerId: string;
  chgId: string | null;
  merchantId: string | null;
  debits: bigint;
  credits: bigint;
  balance: bigint;
  total: bigint;
}

export async function trialBalancePage(
  db: Db,
  query: { issuerId?: string; limit: number; cursor?: string },
): Promise<TrialBalance & { nextCursor: string | null }> {
  const after = accountCursor(query.cursor);
  const issuer = query.issuerId === undefined ? Prisma.sql`TRUE` : Prisma.sql`issuer_id = ${query.issuerId}`;
  const keyset = after ? Prisma.sql`AND (issuer_id, kind, id) > (${after[0]}, ${after[1]}, ${after[2]})` : Prisma.empty;
  // The LEFT JOIN keeps the total when the page is empty (a cursor past the last account).
  const rows = await db.$queryRaw<Array<Row | ({ [K in Exclude<keyof Row, 'total'>]: null } & { total: bigint })>>`
    WITH total AS (SELECT COALESCE(SUM(amount_minor), 0)::bigint AS total FROM ledger_entry WHERE ${issuer}),
         page AS (SELECT id, kind, issuer_id, chg_id, merchant_id, balance_minor FROM ledger_account
                   WHERE ${issuer} ${keyset} ORDER BY issuer_id, kind, id LIMIT ${query.limit + 1})
    SELECT p.id, p.kind, p.issuer_id AS "issuerId", p.chg_id AS "chgId", p.merchant_id AS "merchantId",
           s.debits, s.credits, p.balance_minor AS balance, total.total
      FROM total
      LEFT JOIN page p ON true
      LEFT JOIN LATERAL (
        SELECT COALESCE(SUM(e.amount_minor) FILTER (WHERE e.amount_minor > 0), 0)::bigint AS debits,
               COALESCE(-SUM(e.amount_minor) FILTER (WHERE e.amount_minor < 0), 0)::bigint AS credits
          FROM ledger_entry e WHERE e.account_id = p.id) s ON p.id IS NOT NULL
     ORDER BY p.issuer_id, p.kind, p.id`;
  const accounts = rows.filter((r): r is Row => r.id !== null);
  const { data, nextCursor } = toPage(accounts, query.limit, (a) => [a.issuerId, a.kind, a.id]);
  return {
    currency: 'usd',
    accounts: data.map((r) => ({
      id: r.id,
      kind: r.kind,
      issuerId: r.issuerId,
      chgId: r.chgId,
      merchantId: r.merchantId,
      debitsMinor: fromDbMinor(r.debits),
      creditsMinor: fromDbMinor(r.credits),
      balanceMinor: fromDbMinor(r.balance),
    })),
    totalMinor: fromDbMinor(rows[0].total),
    nextCursor,
  };
}

function accountCursor(cursor: string | undefined): [string, string, string] | undefined {
  const key = decodeCursor(cursor, 3);
  if (key === undefined) return undefined;
  if (!key.every((k) => typeof k === 'string')) {
    throw errors.validation('invalid_query', 'The cursor is not one this service issued.', [
      { path: '/cursor', message: 'is invalid' },
    ]);
  }
  return key as [string, string, string];
}
