// What a group has on hold (API.md, "Cashback that is paid out"), read in constant time whatever
// its history: a running total per group (cashback_held), moved by triggers with every hold
// written, minus what matured since the worker's last sweep (or plus, for an instant before it).
// The arithmetic, the triggers and why each is safe beside concurrent writers are in migration
// 20261202120000_cashback_held_totals; the reasons in docs/decisions/0045-cashback-held-running-total.md.
import type { Db } from '../../prisma/client';

/**
 * SQL of what the group (`issuer`, `chg`: column references) holds at the instant `at` (an
 * expression of type timestamptz): the sum of remaining_minor of its holds payable after `at`,
 * as the total gives it. Two range reads of cashback_hold_group_idx, each bounded by what matured
 * between the last sweep and `at`; 0 for a group that never had a hold.
 */
export function heldAtSql(issuer: string, chg: string, at: string): string {
  return `coalesce((SELECT h.held_minor
        - coalesce((SELECT sum(c.remaining_minor) FROM cashback_hold c
                     WHERE c.issuer_id = h.issuer_id AND c.chg_id = h.chg_id
                       AND c.payable_at > h.matured_through AND c.payable_at <= ${at}), 0)
        + coalesce((SELECT sum(c.remaining_minor) FROM cashback_hold c
                     WHERE c.issuer_id = h.issuer_id AND c.chg_id = h.chg_id
                       AND c.payable_at > ${at} AND c.payable_at <= h.matured_through), 0)
      FROM cashback_held h WHERE h.issuer_id = ${issuer} AND h.chg_id = ${chg}), 0)`;
}

/** Groups one sweep transaction takes: short enough that a settlement of one barely notices. */
export const SWEEP_BATCH_GROUPS = 500;
/** Batches per issuer per turn; what is left waits for the next turn. */
export const SWEEP_MAX_BATCHES = 20;

export interface SweepResult {
  /** Groups whose matured holds were taken out of their totals. */
  swept: number;
  /** Whether a batch came back full: the next turn should come soon. */
  more: boolean;
}

/**
 * Takes what matured out of the groups' totals, each issuer's groups to its own now (real time
 * plus a sandbox issuer's clock offset, `nowMs` standing for real time). Only how much a reader's
 * correction term has to read depends on it: readers are exact whatever the sweep has done.
 * One transaction per batch of groups; groups being written are skipped until the next turn.
 */
export async function sweepMaturedHolds(
  db: Pick<Db, '$queryRaw'>,
  options: { nowMs?: number; batchGroups?: number; maxBatches?: number; issuerId?: string } = {},
): Promise<SweepResult> {
  const nowMs = options.nowMs ?? Date.now();
  const batchGroups = options.batchGroups ?? SWEEP_BATCH_GROUPS;
  const maxBatches = options.maxBatches ?? SWEEP_MAX_BATCHES;
  // Each issuer with a group due at its own clock, read through the partial index.
  const issuers = await db.$queryRaw<Array<{ id: string; through: Date }>>`
    SELECT i.id, x.through FROM issuer i
     CROSS JOIN LATERAL (SELECT (${new Date(nowMs)}::timestamptz + make_interval(secs => i.clock_offset_ms / 1000.0)) AS through) x
     WHERE (${options.issuerId ?? null}::text IS NULL OR i.id = ${options.issuerId ?? null}::text)
       AND EXISTS (SELECT 1 FROM cashback_held h WHERE h.issuer_id = i.id AND h.next_payable_at <= x.through)
     ORDER BY i.id`;
  const result: SweepResult = { swept: 0, more: false };
  for (const issuer of issuers) {
    for (let batch = 0; batch < maxBatches; batch++) {
      const [{ swept }] = await db.$queryRaw<Array<{ swept: number }>>`
        SELECT cashback_held_sweep(${issuer.id}, ${issuer.through}::timestamptz, ${batchGroups}::int) AS swept`;
      result.swept += swept;
      if (swept < batchGroups) break;
      if (batch === maxBatches - 1) result.more = true;
    }
  }
  return result;
}
