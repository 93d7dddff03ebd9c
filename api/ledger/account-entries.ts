// An operator's account statement: one ledger account and a page of its entries, newest first,
// keyset-paginated on the entry's sequence number, in ONE statement (one snapshot: the balance
// shown is the balance after the newest entry of the first page).
import { exampleId } from '../schemas/examples';
import type { Db } from '../../prisma/client';
import { Prisma } from '../../prisma/generated/client';
import { ACCOUNT_KINDS, fromDbMinor } from '../../core/ledger';
import { errors } from '../../core/errors';
import { decodeCursor, encodeCursor } from '../pagination';
import { presentEntry } from './lineage';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/** core/ledger/accounts.ts builds account ids as <issuerId>:<kind>[:<chgId>][:<merchantId>]. */
export const ACCOUNT_ID_PARAM = {
  pattern: `^iss_${UUID}:(${ACCOUNT_KINDS.join('|')})(:chg_${UUID})?(:mp_${UUID})?$`,
  description:
    'a ledger account key, <issuerId>:<kind>[:<chgId>][:<merchantId>], as the trial balance lists them (":" may be sent as %3A).',
  example: `${exampleId('iss')}:chg_cashback:${exampleId('chg')}`,
};

interface AccountRow {
  id: string;
  kind: string;
  issuerId: string;
  chgId: string | null;
  merchantId: string | null;
  normalSide: 'debit' | 'credit';
  balanceMinor: string;
  entries: Array<{
    id: string;
    amountMinor: string;
    postedAt: string;
    transferId: string;
    transferKind: string;
    idempotencyKey: string;
    rewardEventId: string | null;
    transactionId: string | null;
    counterAccountId: string;
  }>;
}

/** The account and one page of its entries; a 404 when the account does not exist. */
export async function accountEntriesPage(db: Db, accountId: string, query: { limit: number; cursor?: string }) {
  const before = entryCursor(query.cursor);
  const rows = await db.$queryRaw<AccountRow[]>`
    SELECT a.id, a.kind, a.issuer_id AS "issuerId", a.chg_id AS "chgId", a.merchant_id AS "merchantId",
           a.normal_side AS "normalSide", a.balance_minor::text AS "balanceMinor",
           (SELECT coalesce(jsonb_agg(p ORDER BY p.seq DESC), '[]'::jsonb) FROM (
              SELECT le.id AS seq, le.id::text AS id, le.amount_minor::text AS "amountMinor",
                     to_char(le.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "postedAt",
                     t.id AS "transferId", t.kind AS "transferKind", t.idempotency_key AS "idempotencyKey",
                     t.reward_event_id AS "rewardEventId", t.transaction_id AS "transactionId",
                     CASE WHEN t.debit_account_id = le.account_id THEN t.credit_account_id ELSE t.debit_account_id END AS "counterAccountId"
                FROM ledger_entry le JOIN ledger_transfer t ON t.id = le.transfer_id
               WHERE le.account_id = a.id ${before === undefined ? Prisma.empty : Prisma.sql`AND le.id < ${before}::bigint`}
               ORDER BY le.id DESC
               LIMIT ${query.limit + 1}) p) AS entries
      FROM ledger_account a
     WHERE a.id = ${accountId}`;
  if (rows.length === 0) throw errors.notFound('account_not_found', `No ledger account ${accountId}.`);
  return presentPage(rows[0], query.limit);
}

/** The cursor holds the last entry served; a forged one gets the same 400 as a garbled one. */
function entryCursor(cursor: string | undefined): string | undefined {
  const key = decodeCursor(cursor, 1);
  if (key === undefined) return undefined;
  if (typeof key[0] !== 'string' || !/^[0-9]{1,19}$/.test(key[0])) {
    throw errors.validation('invalid_query', 'The cursor is not one this service issued.', [
      { path: '/cursor', message: 'is invalid' },
    ]);
  }
  return key[0];
}

function presentPage(row: AccountRow, limit: number) {
  const page = row.entries.slice(0, limit);
  const last = page[page.length - 1];
  return {
    account: {
      id: row.id,
      kind: row.kind,
      issuerId: row.issuerId,
      chgId: row.chgId,
      merchantId: row.merchantId,
      normalSide: row.normalSide,
      balanceMinor: fromDbMinor(row.balanceMinor),
      currency: 'usd' as const,
    },
    data: page.map((e) => {
      const { direction, amountMinor } = presentEntry({
        accountId: row.id,
        accountKind: row.kind,
        chgId: row.chgId,
        merchantId: row.merchantId,
        amountMinor: e.amountMinor,
      });
      return {
        entryId: e.id,
        transferId: e.transferId,
        transferKind: e.transferKind,
        idempotencyKey: e.idempotencyKey,
        rewardEventId: e.rewardEventId,
        transactionId: e.transactionId,
        postedAt: e.postedAt,
        direction,
        amountMinor,
        currency: 'usd' as const,
        counterAccountId: e.counterAccountId,
      };
    }),
    nextCursor: row.entries.length > limit && last ? encodeCursor([last.id]) : null,
  };
}
