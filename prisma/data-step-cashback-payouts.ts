// The data step of migration 20261128100100_cashback_existing_data (prisma/data-steps.ts): what a
// database holds from before cashback could be paid out becomes what the new release expects.
//   1. Every settled purchase that earned cashback gets its hold: what it still keeps (earned
//      minus its own clawbacks), payable its createdAt plus the issuer's cashbackHoldDays later
//      (no offer had its own return window yet).
//   2. What refunds could not claw back (their match trace's unrecoverableMinor) becomes owed by
//      the group: the transfers the refund step now posts (chg_cashback_owed -> the merchant's
//      receivable), under the keys it would have used, with their reward events; the refund's
//      trace names them, and a purchase all of whose reward is now back reads `reversed`.
// Idempotent: holds ON CONFLICT DO NOTHING, and a refund whose owed transfer exists is skipped.
// Runs in the migration's transaction; docs/operating/upgrading.md explains its report.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { newId } from '../core/ids';
import type { DataStepContext } from './data-steps';

export async function putExistingCashbackOnHold(client: pg.ClientBase): Promise<string | undefined> {
  const {
    rows: [held],
  } = await client.query<{ purchases: number; amount: string; on_hold: number }>(`
    WITH per_purchase AS (
      SELECT r.transaction_id,
             sum(CASE WHEN r.type = 'cashback_earned' THEN r.amount_minor ELSE 0 END) AS earned,
             sum(CASE WHEN r.type = 'cashback_clawed_back' AND NOT r.covers_branded_shortfall THEN r.amount_minor ELSE 0 END) AS clawed
        FROM reward_event r
       WHERE r.type IN ('cashback_earned', 'cashback_clawed_back') AND r.transaction_id IS NOT NULL
       GROUP BY r.transaction_id),
    written AS (
      INSERT INTO cashback_hold (transaction_id, issuer_id, chg_id, amount_minor, remaining_minor, payable_at, created_at, updated_at)
      SELECT e.id, e.issuer_id, e.chg_id, p.earned, GREATEST(0, LEAST(p.earned, p.earned - p.clawed)),
             e.event_created_at + make_interval(days => i.cashback_hold_days), now(), now()
        FROM per_purchase p
        JOIN ingested_event e ON e.id = p.transaction_id AND e.kind = 'settled' AND e.state = 'settled'
        JOIN issuer i ON i.id = e.issuer_id
       WHERE p.earned > 0
      ON CONFLICT (transaction_id) DO NOTHING
      RETURNING payable_at, remaining_minor, issuer_id)
    SELECT count(*)::int AS purchases, coalesce(sum(w.remaining_minor), 0)::text AS amount,
           count(*) FILTER (WHERE w.payable_at > now() + make_interval(secs => i.clock_offset_ms / 1000.0))::int AS on_hold
      FROM written w JOIN issuer i ON i.id = w.issuer_id`);
  if (held.purchases === 0) return undefined;
  return (
    `${held.purchases} purchase(s) that earned cashback got a hold (${held.amount} minor units kept): ` +
    `${held.on_hold} still in their return window, ${held.purchases - held.on_hold} payable`
  );
}

interface UnrecoverableRefund {
  refund_id: string;
  issuer_id: string;
  chg_id: string;
  merchant_id: string;
  purchase_id: string;
  cashback_owed: string;
  branded_owed: string;
  offer_id: string | null;
}

/** Refunds whose trace recorded value they could not take back, and have no owed transfer yet. */
async function unrecoverableRefunds(client: pg.ClientBase): Promise<UnrecoverableRefund[]> {
  const { rows } = await client.query<UnrecoverableRefund>(`
    SELECT r.id AS refund_id, r.issuer_id, p.chg_id, p.merchant_id, p.id AS purchase_id,
           coalesce((r.match_trace -> 'cashback' ->> 'unrecoverableMinor')::bigint, 0)::text AS cashback_owed,
           coalesce((r.match_trace -> 'branded' ->> 'unrecoverableMinor')::bigint, 0)::text AS branded_owed,
           (SELECT o.offer_id FROM reward_event o WHERE o.transaction_id = p.id AND o.type = 'cashback_earned' LIMIT 1) AS offer_id
      FROM ingested_event r JOIN ingested_event p ON p.id = r.related_event_id
     WHERE r.kind = 'settled' AND r.state = 'refunded' AND p.merchant_id IS NOT NULL
       AND (coalesce((r.match_trace -> 'cashback' ->> 'unrecoverableMinor')::bigint, 0) > 0
         OR coalesce((r.match_trace -> 'branded' ->> 'unrecoverableMinor')::bigint, 0) > 0)
       AND NOT EXISTS (SELECT 1 FROM ledger_transfer t WHERE t.idempotency_key IN
             ('refund:' || r.id || ':clawback_cashback_owed', 'refund:' || r.id || ':clawback_cashback_for_branded_owed'))
     ORDER BY r.id`);
  return rows;
}

/** One owed clawback as the refund step posts it: transfer, entries, balances, reward event, totals. */
async function postOwed(
  client: pg.ClientBase,
  r: UnrecoverableRefund,
  amount: string,
  shortfall: boolean,
): Promise<string> {
  const owedAccount = `${r.issuer_id}:chg_cashback_owed:${r.chg_id}`;
  const receivable = `${r.issuer_id}:merchant_receivable:${r.merchant_id}`;
  const [eventKey, transferKey] = shortfall
    ? ['branded_shortfall_from_cashback_owed', 'clawback_cashback_for_branded_owed']
    : ['cashback_clawed_back_owed', 'clawback_cashback_owed'];
  const eventId = newId('brevt');
  const transferId = randomUUID();
  await client.query(
    `INSERT INTO ledger_account (id, issuer_id, kind, chg_id, merchant_id, normal_side, created_at)
     VALUES ($1, $2, 'chg_cashback_owed', $3, NULL, 'debit', now()) ON CONFLICT (id) DO NOTHING`,
    [owedAccount, r.issuer_id, r.chg_id],
  );
  await client.query(
    `WITH event AS (
       INSERT INTO reward_event (id, issuer_id, chg_id, type, amount_minor, currency, merchant_id, transaction_id, offer_id,
                                 source_event_id, idempotency_key, description, covers_branded_shortfall, occurred_at, created_at)
       VALUES ($1, $2, $3, 'cashback_clawed_back', $4::bigint, 'usd', $5, $6, $7, $8, $9, $10, $11, now(), now())),
     transfer AS (
       INSERT INTO ledger_transfer (id, issuer_id, idempotency_key, kind, debit_account_id, credit_account_id, amount_minor,
                                    reward_event_id, transaction_id, created_at)
       VALUES ($12, $2, $13, 'clawback_cashback_owed', $14, $15, $4::bigint, $1, $6, now())),
     entries AS (
       INSERT INTO ledger_entry (issuer_id, transfer_id, account_id, amount_minor, created_at)
       VALUES ($2, $12, $14, $4::bigint, now()), ($2, $12, $15, -($4::bigint), now())),
     totals AS (
       INSERT INTO reward_total (issuer_id, chg_id, merchant_id, offer_id, type, amount_minor, event_count)
       VALUES ($2, $3, $5, coalesce($7, ''), 'cashback_clawed_back', $4::bigint, 1)
       ON CONFLICT (issuer_id, chg_id, merchant_id, offer_id, type) DO UPDATE
         SET amount_minor = reward_total.amount_minor + EXCLUDED.amount_minor, event_count = reward_total.event_count + 1)
     UPDATE ledger_account SET balance_minor = balance_minor + CASE WHEN id = $14 THEN $4::bigint ELSE -($4::bigint) END
      WHERE id IN ($14, $15)`,
    [
      eventId,
      r.issuer_id,
      r.chg_id,
      amount,
      r.merchant_id,
      r.purchase_id,
      r.offer_id,
      r.refund_id,
      `refund:${r.refund_id}:${eventKey}`,
      shortfall
        ? 'Spent or expired balance reversed by a refund, owed: it was already paid out'
        : 'Cashback reversed by a refund, owed: it was already paid out',
      shortfall,
      transferId,
      `refund:${r.refund_id}:${transferKey}`,
      owedAccount,
      receivable,
    ],
  );
  return eventId;
}

export async function turnUnrecoverableIntoOwed(client: pg.ClientBase): Promise<string | undefined> {
  const refunds = await unrecoverableRefunds(client);
  if (refunds.length === 0) return undefined;
  let total = 0n;
  for (const r of refunds) {
    const eventIds: string[] = [];
    if (BigInt(r.cashback_owed) > 0n) eventIds.push(await postOwed(client, r, r.cashback_owed, false));
    if (BigInt(r.branded_owed) > 0n) eventIds.push(await postOwed(client, r, r.branded_owed, true));
    total += BigInt(r.cashback_owed) + BigInt(r.branded_owed);
    await client.query(
      `UPDATE ingested_event SET match_trace = match_trace
         || jsonb_build_object('rewardEventIds', coalesce(match_trace -> 'rewardEventIds', '[]'::jsonb) || to_jsonb($2::text[]))
         || jsonb_build_object('cashback', coalesce(match_trace -> 'cashback', '{}'::jsonb) || jsonb_build_object('owedMinor', $3::bigint))
         || jsonb_build_object('branded', coalesce(match_trace -> 'branded', '{}'::jsonb) || jsonb_build_object('shortfallOwedMinor', $4::bigint))
       WHERE id = $1`,
      [r.refund_id, eventIds, r.cashback_owed, r.branded_owed],
    );
  }
  // A purchase whose reward is now all back (earned = clawed back, owed included) reads reversed.
  const reversed = await client.query(`
    UPDATE ingested_event p SET reward_status = 'reversed'
     WHERE p.reward_status = 'matched' AND p.kind = 'settled' AND p.state = 'settled'
       AND p.id IN (SELECT related_event_id FROM ingested_event WHERE kind = 'settled' AND state = 'refunded')
       AND (SELECT coalesce(sum(CASE WHEN type IN ('cashback_earned', 'branded_earned') THEN amount_minor ELSE -amount_minor END), 0)
              FROM reward_event WHERE transaction_id = p.id
               AND type IN ('cashback_earned', 'branded_earned', 'cashback_clawed_back', 'branded_clawed_back')) <= 0
       AND EXISTS (SELECT 1 FROM reward_event WHERE transaction_id = p.id AND type IN ('cashback_earned', 'branded_earned'))`);
  return (
    `${refunds.length} refund(s) had value they could not claw back: ${total} minor units now owed by their groups` +
    `${
      refunds.length > 0
        ? ` (first refund ids: ${refunds
            .slice(0, 20)
            .map((r) => r.refund_id)
            .join(', ')})`
        : ''
    }; ` +
    `${reversed.rowCount ?? 0} purchase(s) now read reversed`
  );
}

/** Both, in order, as one report; none on a database that had nothing of either. */
export async function cashbackPayoutsDataStep({ client }: DataStepContext): Promise<string | void> {
  const parts = [await putExistingCashbackOnHold(client), await turnUnrecoverableIntoOwed(client)].filter(Boolean);
  if (parts.length > 0) return `${parts.join('. ')}.`;
}
