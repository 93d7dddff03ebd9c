// The trial balance (API.md, Operator API): every account with its debits, credits and
// balance, and the signed total of all entries, which double entry keeps at zero.
import { Prisma } from '../../prisma/generated/client';
import type { Db } from '../../prisma/client';
import { fromDbMinor, type AccountKind } from '../ledger';
type Tx = Prisma.TransactionClient;

export interface TrialBalanceAccount {
  id: string;
  kind: AccountKind;
  issuerId: string;
  chgId: string | null;
  merchantId: string | null;
  debitsMinor: number;
  creditsMinor: number;
  /** Signed by the account's normal side: what the account holds (assets, liabilities, income alike). */
  balanceMinor: number;
}

export interface TrialBalance {
  currency: 'usd';
  accounts: TrialBalanceAccount[];
  /** Sum of all signed entries (debits positive): 0 in a healthy ledger. */
  totalMinor: number;
}

export function issuerFilter(column: string, issuerId: string | undefined): Prisma.Sql {
  return issuerId === undefined ? Prisma.sql`TRUE` : Prisma.sql`${Prisma.raw(column)} = ${issuerId}`;
}

export async function trialBalance(db: Db | Tx, options: { issuerId?: string } = {}): Promise<TrialBalance> {
  const rows = await db.$queryRaw<
    {
      id: string;
      kind: AccountKind;
      issuer_id: string;
      chg_id: string | null;
      merchant_id: string | null;
      debits: bigint;
      credits: bigint;
      balance: bigint;
    }[]
  >`
    SELECT a.id, a.kind, a.issuer_id, a.chg_id, a.merchant_id,
           COALESCE(SUM(e.amount_minor) FILTER (WHERE e.amount_minor > 0), 0)::bigint AS debits,
           COALESCE(-SUM(e.amount_minor) FILTER (WHERE e.amount_minor < 0), 0)::bigint AS credits,
           a.balance_minor AS balance
      FROM ledger_account a LEFT JOIN ledger_entry e ON e.account_id = a.id
     WHERE ${issuerFilter('a.issuer_id', options.issuerId)}
     GROUP BY a.id ORDER BY a.issuer_id, a.kind, a.id`;
  const [total] = await db.$queryRaw<{ total: bigint }[]>`
    SELECT COALESCE(SUM(amount_minor), 0)::bigint AS total FROM ledger_entry WHERE ${issuerFilter('issuer_id', options.issuerId)}`;
  return {
    currency: 'usd',
    accounts: rows.map((r) => ({
      id: r.id,
      kind: r.kind,
      issuerId: r.issuer_id,
      chgId: r.chg_id,
      merchantId: r.merchant_id,
      debitsMinor: fromDbMinor(r.debits),
      creditsMinor: fromDbMinor(r.credits),
      balanceMinor: fromDbMinor(r.balance),
    })),
    totalMinor: fromDbMinor(total.total),
  };
}
