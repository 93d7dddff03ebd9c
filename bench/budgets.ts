// Phase: offer budgets (DESIGN.md, Quality bars, Budgets). Three measurements on the bench's stack:
//   1. the lifecycle with every purchase hitting one budgeted offer, beside the same lifecycle
//      with every purchase hitting its unbudgeted twin (same merchant terms, same offer but for the
//      budget, large enough never to run out), in alternated rounds on the same fixture groups:
//      the figure is the budgeted drains' mean steady rate as a share of the unbudgeted ones';
//   2. a race: purchases at an offer whose budget covers half of them, ingested at once and settled
//      by the real worker; overspent must be 0 (and the budget used to the minor unit);
//   3. where the budget row is locked (bench/budget-locks.ts): settlement-shaped transactions with
//      the row locked early, late (the service's), late in a statement of its own, or sharded,
//      beside none, on the same PostgreSQL: the measurement decision 0039 rests on.
import pg from 'pg';
import { caller, type Fixture } from './fixtures';
import { pendingAfterDrain, runLifecycleDrain, type DrainResult } from './sustained';
import type { Receiver } from './receiver';
import { settledEvent } from '../test/helpers/events';
import { measureBudgetLocks, type LockResult } from './budget-locks';

export interface BudgetRound {
  budgeted: DrainResult;
  unbudgeted: DrainResult;
}

export interface BudgetRace {
  purchases: number;
  budgetMinor: number;
  usedMinor: number;
  earnedMinor: number;
  /** Earned beyond the budget: the bar is 0. */
  overspentMinor: number;
  rewarded: number;
  refused: number;
  seconds: number;
}

export interface BudgetResult {
  rounds: BudgetRound[];
  drain: { pending: number; trialBalanceMinor: number };
  race: BudgetRace;
  locks: LockResult;
}

interface Options {
  apiUrl: string;
  operatorToken: string;
  databaseUrl: string;
  fixture: Fixture;
  receiver: Receiver;
  backlog: number;
  rounds: number;
  racePurchases: number;
  lockSeconds: number;
  lockRounds: number;
  timeoutMs: number;
  runId: string;
  log: (line: string) => void;
}

/** A cashback merchant like the fixture's, with one offer; activated for every fixture group. */
async function merchantWithOffer(o: Options, name: string, offer: Record<string, unknown>): Promise<string> {
  const operator = caller(o.apiUrl, o.operatorToken);
  const issuer = caller(o.apiUrl, o.fixture.token);
  const merchant = await operator('POST', '/admin/v1/merchants', {
    name,
    category: 'dining',
    brandedBalance: { enabled: false, spendMinimumMinor: 0, availabilityDelayDays: 0, expiryDays: 365 },
  });
  await operator('POST', `/admin/v1/merchants/${merchant.id}/offers`, {
    title: name,
    cashbackRateBps: 500,
    brandedRateBps: 0,
    startsAt: new Date(Date.now() - 10 * 86_400_000).toISOString(),
    ...offer,
  });
  for (const g of o.fixture.groups)
    await issuer('PUT', `/api/v2/chg/${g.chgId}/merchant/${merchant.id}/activation`, {});
  return merchant.id as string;
}

export async function measureBudgets(o: Options): Promise<BudgetResult> {
  // Never runs out during the phase: what is measured is the budget's row, not its edge.
  const budgeted = await merchantWithOffer(o, 'Bench budgeted', { budgetMinor: 1_000_000_000_000 });
  const twin = await merchantWithOffer(o, 'Bench unbudgeted twin', {});
  const rounds: BudgetRound[] = [];
  for (let round = 1; round <= o.rounds; round++) {
    // Alternated order, as in the tracing phase: each drain runs a little slower than the one before.
    const sides = round % 2 === 1 ? (['unbudgeted', 'budgeted'] as const) : (['budgeted', 'unbudgeted'] as const);
    const result: Partial<BudgetRound> = {};
    for (const side of sides) {
      const merchantId = side === 'budgeted' ? budgeted : twin;
      result[side] = await runLifecycleDrain({
        apiUrl: o.apiUrl,
        fixture: { ...o.fixture, merchantIds: [merchantId] },
        receiver: o.receiver,
        backlog: o.backlog,
        timeoutMs: o.timeoutMs,
        runId: `${o.runId}-budget-${side}-${round}`,
        onTransaction: () => undefined,
      });
      o.log(`budgets: round ${round}, ${side}: ${result[side].steadyPerSecond.toFixed(1)}/s steady`);
    }
    rounds.push(result as BudgetRound);
  }
  const drain = await pendingAfterDrain(o.databaseUrl, o.fixture.issuerId, `sus-${o.runId}-budget-`, 30_000);
  const race = await runRace(o);
  o.log(
    `budgets: race of ${race.purchases}: overspent ${race.overspentMinor}, used ${race.usedMinor} of ${race.budgetMinor}`,
  );
  const locks = await measureBudgetLocks({
    databaseUrl: o.databaseUrl,
    clients: 16,
    seconds: o.lockSeconds,
    rounds: o.lockRounds,
    log: o.log,
  });
  return { rounds, drain: { pending: drain.pending, trialBalanceMinor: drain.trialBalanceMinor }, race, locks };
}

/**
 * Purchases of 1,000 at 5 %: 50 each, and a budget of half of them plus 25, so one purchase at the
 * edge gets 25. Ingested at once, settled by the worker; waits until none is pending.
 */
async function runRace(o: Options): Promise<BudgetRace> {
  const half = Math.floor(o.racePurchases / 2);
  const budgetMinor = half * 50 + 25;
  const merchantId = await merchantWithOffer(o, 'Bench budget race', { budgetMinor });
  const prefix = `race-${o.runId}-`;
  const issuer = caller(o.apiUrl, o.fixture.token);
  const events = Array.from({ length: o.racePurchases }, (_, n) =>
    settledEvent(o.fixture.groups[n % o.fixture.groups.length].card, {
      id: `${prefix}${n}`,
      amount: 1_000,
      merchantId,
    }),
  );
  const started = performance.now();
  for (let b = 0; b < events.length; b += 500) await issuer('POST', '/api/v1/incoming-txn', events.slice(b, b + 500));
  const drain = await pendingAfterDrain(o.databaseUrl, o.fixture.issuerId, prefix, o.timeoutMs);
  const seconds = (performance.now() - started) / 1000;
  const db = new pg.Client({ connectionString: o.databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{ used: string; earned: string; rewarded: string; refused: string }>(
      `SELECT (SELECT coalesce(sum(b.used_minor), 0) FROM offer_budget b JOIN offer f ON f.id = b.offer_id WHERE f.merchant_id = $1) AS used,
              (SELECT coalesce(sum(r.amount_minor), 0) FROM reward_event r WHERE r.issuer_id = $2 AND r.merchant_id = $1 AND r.type = 'cashback_earned') AS earned,
              (SELECT count(*) FROM ingested_event e WHERE e.issuer_id = $2 AND e.external_id LIKE $3 AND e.reward_status = 'matched') AS rewarded,
              (SELECT count(*) FROM ingested_event e WHERE e.issuer_id = $2 AND e.external_id LIKE $3 AND e.reward_status = 'not_matched') AS refused`,
      [merchantId, o.fixture.issuerId, `${prefix}%`],
    );
    const r = rows[0];
    if (drain.pending > 0) throw new Error(`budget race: ${drain.pending} purchases still pending`);
    return {
      purchases: o.racePurchases,
      budgetMinor,
      usedMinor: Number(r.used),
      earnedMinor: Number(r.earned),
      overspentMinor: Math.max(0, Number(r.earned) - budgetMinor, Number(r.used) - budgetMinor),
      rewarded: Number(r.rewarded),
      refused: Number(r.refused),
      seconds,
    };
  } finally {
    await db.end();
  }
}

/** The budgeted drains' mean steady rate as a share of the unbudgeted ones'. */
export function budgetShare(rounds: readonly BudgetRound[]): number {
  const mean = (side: keyof BudgetRound) => rounds.reduce((s, r) => s + r[side].steadyPerSecond, 0) / rounds.length;
  return (mean('budgeted') / mean('unbudgeted')) * 100;
}
