// The ledger's invariants, checked against the stored rows. The database enforces what a
// single row can (CHECKs, unique keys); these are the ones that span rows. Tests call this
// after every scenario (test/helpers/ledger.ts); an operator check can call it too.
import { Prisma } from '../../../prisma/generated/client';
import type { Db } from '../../../prisma/client';
import { issuerFilter } from '../trial-balance';
import type { Tx } from './tx';

/** Each check reports at most this many offenders: enough to debug, bounded in size. */
const MAX_REPORTED = 20;

interface Check {
  name: string;
  query(issuerId: string | undefined): Prisma.Sql;
}

const CHECKS: Check[] = [
  {
    name: 'transfer has exactly two entries that sum to zero and match its accounts and amount',
    query: (issuerId) => Prisma.sql`
      SELECT t.id AS subject, COUNT(e.id)::text || ' entries, sum ' || COALESCE(SUM(e.amount_minor), 0)::text AS detail
        FROM ledger_transfer t LEFT JOIN ledger_entry e ON e.transfer_id = t.id
       WHERE ${issuerFilter('t.issuer_id', issuerId)}
       GROUP BY t.id
      HAVING COUNT(e.id) <> 2 OR COALESCE(SUM(e.amount_minor), 0) <> 0
          OR COUNT(*) FILTER (WHERE e.account_id = t.debit_account_id AND e.amount_minor = t.amount_minor) <> 1
          OR COUNT(*) FILTER (WHERE e.account_id = t.credit_account_id AND e.amount_minor = -t.amount_minor) <> 1`,
  },
  {
    name: 'all entries sum to zero',
    query: (issuerId) => Prisma.sql`
      SELECT 'ledger' AS subject, 'total ' || SUM(amount_minor)::text AS detail FROM ledger_entry
       WHERE ${issuerFilter('issuer_id', issuerId)} HAVING COALESCE(SUM(amount_minor), 0) <> 0`,
  },
  {
    name: 'cached account balance equals the sum of its entries',
    query: (issuerId) => Prisma.sql`
      SELECT a.id AS subject, 'cached ' || a.balance_minor::text || ', entries ' || COALESCE(SUM(e.amount_minor), 0)::text AS detail
        FROM ledger_account a LEFT JOIN ledger_entry e ON e.account_id = a.id
       WHERE ${issuerFilter('a.issuer_id', issuerId)}
       GROUP BY a.id
      HAVING a.balance_minor <> CASE a.normal_side WHEN 'debit' THEN COALESCE(SUM(e.amount_minor), 0) ELSE -COALESCE(SUM(e.amount_minor), 0) END`,
  },
  {
    name: 'liability account is not negative',
    query: (issuerId) => Prisma.sql`
      SELECT id AS subject, 'balance ' || balance_minor::text AS detail FROM ledger_account
       WHERE ${issuerFilter('issuer_id', issuerId)} AND kind IN ('chg_cashback', 'chg_branded') AND balance_minor < 0`,
  },
  {
    name: 'grant remaining is within 0..amount and equals amount minus its draws',
    query: (issuerId) => Prisma.sql`
      SELECT g.id AS subject, 'amount ' || g.amount_minor::text || ', remaining ' || g.remaining_minor::text || ', drawn ' || COALESCE(SUM(d.amount_minor), 0)::text AS detail
        FROM reward_grant g LEFT JOIN reward_grant_draw d ON d.grant_id = g.id
       WHERE ${issuerFilter('g.issuer_id', issuerId)}
       GROUP BY g.id
      HAVING g.remaining_minor < 0 OR g.remaining_minor > g.amount_minor OR g.remaining_minor <> g.amount_minor - COALESCE(SUM(d.amount_minor), 0)`,
  },
  {
    name: 'branded account balance equals the remaining value of its grants',
    query: (issuerId) => Prisma.sql`
      SELECT a.id AS subject, 'balance ' || a.balance_minor::text || ', grants ' || COALESCE(SUM(g.remaining_minor), 0)::text AS detail
        FROM ledger_account a LEFT JOIN reward_grant g ON g.account_id = a.id
       WHERE ${issuerFilter('a.issuer_id', issuerId)} AND a.kind = 'chg_branded'
       GROUP BY a.id
      HAVING a.balance_minor <> COALESCE(SUM(g.remaining_minor), 0)`,
  },
  {
    name: 'transfer draws sum to the transfer amount',
    query: (issuerId) => Prisma.sql`
      SELECT t.id AS subject, t.kind || ' of ' || t.amount_minor::text || ', drawn ' || COALESCE(SUM(d.amount_minor), 0)::text AS detail
        FROM ledger_transfer t LEFT JOIN reward_grant_draw d ON d.transfer_id = t.id
       WHERE ${issuerFilter('t.issuer_id', issuerId)} AND t.kind IN ('spend_branded', 'expire_branded', 'clawback_branded', 'adjust_debit_branded')
       GROUP BY t.id
      HAVING t.amount_minor <> COALESCE(SUM(d.amount_minor), 0)`,
  },
  {
    // The maintained totals the summary and the offer caps read (migration reward_totals).
    name: 'reward total equals the sum of its reward events',
    query: (issuerId) => Prisma.sql`
      WITH events AS (
        SELECT issuer_id, chg_id, coalesce(merchant_id, '') AS merchant_id, coalesce(offer_id, '') AS offer_id, type,
               SUM(amount_minor) AS amount_minor, COUNT(*) AS event_count
          FROM reward_event WHERE ${issuerFilter('issuer_id', issuerId)}
         GROUP BY 1, 2, 3, 4, 5)
      SELECT coalesce(t.chg_id, e.chg_id) || ' ' || coalesce(t.type, e.type) || ' ' || coalesce(t.offer_id, e.offer_id) AS subject,
             'total ' || coalesce(t.amount_minor::text, 'missing') || ' (' || coalesce(t.event_count::text, '-') || ' events), events '
               || coalesce(e.amount_minor::text, 'none') || ' (' || coalesce(e.event_count::text, '0') || ')' AS detail
        FROM (SELECT * FROM reward_total WHERE ${issuerFilter('issuer_id', issuerId)}) t
        FULL JOIN events e USING (issuer_id, chg_id, merchant_id, offer_id, type)
       WHERE t.amount_minor IS DISTINCT FROM e.amount_minor OR t.event_count IS DISTINCT FROM e.event_count`,
  },
  {
    // The running total the summary and the payouts read for what is on hold
    // (core/domain/cashback-held.ts): every group with a hold has one, equal to the remaining
    // value of its holds payable after its matured_through, and its next_payable_at is no later
    // than the earliest of those still holding value (else the sweep would skip the group).
    name: 'held total equals the remaining value of its holds not yet matured',
    query: (issuerId) => Prisma.sql`
      WITH holds AS (
        SELECT c.issuer_id, c.chg_id,
               sum(c.remaining_minor) FILTER (WHERE t.matured_through IS NULL OR c.payable_at > t.matured_through) AS held,
               min(c.payable_at) FILTER (WHERE c.payable_at > t.matured_through AND c.remaining_minor > 0) AS next_payable_at
          FROM cashback_hold c LEFT JOIN cashback_held t ON t.issuer_id = c.issuer_id AND t.chg_id = c.chg_id
         WHERE ${issuerFilter('c.issuer_id', issuerId)}
         GROUP BY 1, 2)
      SELECT coalesce(t.issuer_id, h.issuer_id) || ' ' || coalesce(t.chg_id, h.chg_id) AS subject,
             'total ' || coalesce(t.held_minor::text, 'missing') || ' after ' || coalesce(t.matured_through::text, '-')
               || ' (next ' || coalesce(t.next_payable_at::text, 'none') || '), holds ' || coalesce(h.held::text, 'none')
               || ' (next ' || coalesce(h.next_payable_at::text, 'none') || ')' AS detail
        FROM (SELECT * FROM cashback_held WHERE ${issuerFilter('issuer_id', issuerId)}) t
        FULL JOIN holds h ON h.issuer_id = t.issuer_id AND h.chg_id = t.chg_id
       WHERE t.held_minor IS DISTINCT FROM coalesce(h.held, 0)
          OR (h.next_payable_at IS NOT NULL AND (t.next_payable_at IS NULL OR t.next_payable_at > h.next_payable_at))`,
  },
  {
    // Budgets are the offer's across every issuer: this one is checked whole whatever issuer is
    // asked about (docs/decisions/0039-offer-budgets.md). Each purchase's match trace names the
    // budget periods it drew on (one per budgeted offer applied; `budgetUse` alone before offers
    // stacked); what its purchases kept of each offer (earned less clawed back) is what the period
    // has used. A cumulative offer's completions count with the purchase that earned them, which
    // took them from the offer's budget (the clawback of one is posted with that purchase); those an
    // approved claim posted are named in the trace's `claims`.
    name: 'offer budget used equals what its purchases kept',
    query: () => Prisma.sql`
      WITH uses AS (
        SELECT DISTINCT e.id, u->>'offerId' AS offer_id, u->>'periodKey' AS period
          FROM ingested_event e
         CROSS JOIN LATERAL jsonb_array_elements(
                 (CASE WHEN jsonb_typeof(e.match_trace->'budgetUses') = 'array' THEN e.match_trace->'budgetUses'
                       WHEN jsonb_typeof(e.match_trace->'budgetUse') = 'object' THEN jsonb_build_array(e.match_trace->'budgetUse')
                       ELSE '[]'::jsonb END)
                 || CASE WHEN jsonb_typeof(e.match_trace->'claims') = 'array'
                         THEN coalesce((SELECT jsonb_agg(x) FROM jsonb_array_elements(e.match_trace->'claims') c,
                                               jsonb_array_elements(coalesce(c->'budgetUses', '[]'::jsonb)) x), '[]'::jsonb)
                         ELSE '[]'::jsonb END) u
         WHERE e.kind = 'settled'),
      kept AS (
        SELECT u.offer_id, u.period, sum(CASE WHEN r.type IN ('cashback_earned', 'branded_earned') THEN r.amount_minor
                                             WHEN r.type IN ('cashback_clawed_back', 'branded_clawed_back') THEN -r.amount_minor
                                             ELSE 0 END) AS net
          FROM uses u JOIN reward_event r ON r.transaction_id = u.id AND r.offer_id = u.offer_id
                                         AND r.issuer_id = (SELECT issuer_id FROM ingested_event WHERE id = u.id)
         GROUP BY 1, 2)
      SELECT coalesce(b.offer_id, k.offer_id) || ' ' || coalesce(nullif(coalesce(b.period, k.period), ''), 'lifetime') AS subject,
             'used ' || coalesce(b.used_minor::text, 'no row') || ', kept ' || coalesce(k.net::text, 'nothing') AS detail
        FROM offer_budget b FULL JOIN kept k ON k.offer_id = b.offer_id AND k.period = b.period
       WHERE coalesce(b.used_minor, 0) <> coalesce(k.net, 0)`,
  },
];

export interface InvariantViolation {
  invariant: string;
  subject: string;
  detail: string;
}

/** Every violated invariant; empty when the ledger is healthy. */
export async function ledgerInvariants(
  db: Db | Tx,
  options: { issuerId?: string } = {},
): Promise<InvariantViolation[]> {
  const violations: InvariantViolation[] = [];
  for (const check of CHECKS) {
    const rows = await db.$queryRaw<
      { subject: string; detail: string }[]
    >`${check.query(options.issuerId)} LIMIT ${MAX_REPORTED}`;
    for (const r of rows) violations.push({ invariant: check.name, subject: r.subject, detail: r.detail });
  }
  return violations;
}
