// Phase: targeted offers (DESIGN.md, Quality bars, Targeting). Four measurements on the bench's stack:
//   1. the lifecycle with every purchase at a merchant whose offer has an audience and a holdout
//      (automatic activation), beside the same lifecycle at its untargeted twin (opt-in, activated,
//      same terms), in alternated rounds on the same groups: the targeted drains' mean steady rate
//      as a share of the untargeted ones'. The groups are the fixture's treated ones: a control
//      group's purchase earns nothing, sends no webhook to count, and is cheaper, so leaving it out
//      can only make the targeted side look slower;
//   2. a group's offer list (GET /api/v2/chg/{chgId}/offers, its first page) with 500 live targeted
//      offers of 100 merchants the fixture issuer sees, each enrolled by its own run first, read by
//      32 connections over the fixture's groups;
//   3. an enrolment run over 1,000,000 groups of one issuer (written straight into the database, as
//      the payout phase writes its groups) into an offer created as it starts, through the operator
//      API: from the run's row to its completion, its Temporal actions per 1,000 groups, and the
//      control's share of the audience against the offer's holdoutBps;
//   4. the lift report over those groups, with settled purchases written straight into the
//      database for a share of them (treated groups buying 5 % more, so the report has a lift to find).
// The lifecycle's rounds have two more sides (DESIGN.md, Quality bars, Offer mechanics): the same
// purchases at a merchant whose percent offer has cumulative offers beside it (spend X get Y and
// the Nth purchase, both repeatable), so each purchase also moves two progress rows and some reach
// completions; and at a merchant stacking three percent offers (one with a budget), so each purchase
// posts three offers' rewards and takes from a budget; each compared with the untargeted twin's
// percent offer alone.
import pg from 'pg';
import { caller, type Fixture } from './fixtures';
import { pendingAfterDrain, runLifecycleDrain, type DrainResult } from './sustained';
import { runReads, type ReadResult } from './reads';
import { actionsOf } from './payouts';
import { cpuBetween, cpuSnapshot, CPU_GROUPS, quietBeforeMeasuring, type CpuGroup } from './cpu';
import type { Receiver } from './receiver';
import type { BenchStack } from './stack';
import { enrolmentRunWorkflowId } from '../workflows/enrolment-run-contract';

const DAY_MS = 86_400_000;
/** The holdout of every targeted offer the phase creates: 10 %. */
const HOLDOUT_BPS = 1000;
/** Uncounted reads of the lists before the measured ones. */
const LIST_WARM_UP_SECONDS = 5;
/** Offers per merchant of the list measurement. */
const OFFERS_PER_MERCHANT = 5;
/** The spend the seeded treated purchases carry above the control's, in per cent. */
const SEEDED_LIFT_PERCENT = 5;

/** Reads of a list, and the CPU milliseconds each read cost by group of processes (absent in runs recorded before it). */
export type ListReads = ReadResult & { cpuMsPerRead?: Record<CpuGroup, number> };

/** A list's CPU per read by group, as a note's tail (nothing for a run that did not measure it). */
export function cpuPerReadNote(reads: ListReads): string {
  const cpu = reads.cpuMsPerRead;
  if (!cpu) return '';
  return `; CPU ms per read: ${Object.entries(cpu)
    .map(([group, ms]) => `${group} ${ms.toFixed(2)}`)
    .join(', ')}`;
}

export interface TargetingRound {
  targeted: DrainResult;
  untargeted: DrainResult;
  /** At a percent offer with cumulative offers beside it (absent in runs recorded before it). */
  cumulative?: DrainResult;
  /** At a merchant stacking three percent offers (absent in runs recorded before it). */
  stacked?: DrainResult;
}

export interface TargetingResult {
  rounds: TargetingRound[];
  /** Fixture groups treated by the lifecycle's targeted offer (the drains' groups), of all of them. */
  treatedGroups: number;
  fixtureGroups: number;
  drain: { pending: number; trialBalanceMinor: number };
  /** The first page; `ranked`, the same by relevance (sort=relevance). */
  list: ListReads & { offers: number; enrolSeconds: number; ranked: ListReads };
  enrolment: {
    groups: number;
    seedSeconds: number;
    /** From the run's row (written with the offer) to its completion, by the database's clock. */
    seconds: number;
    actionsPerThousandGroups: number;
    treated: number;
    control: number;
    outside: number;
    /** The offer's holdout, and control / (treated + control), in per cent. */
    holdoutPercent: number;
    controlSharePercent: number;
  };
  lift: {
    purchases: number;
    seedSeconds: number;
    /** The slowest of the report's calls (the first runs on a cold plan). */
    seconds: number;
    callsSeconds: number[];
    liftBps: number | null;
    ci95Bps: [number | null, number | null];
  };
}

export interface TargetingOptions {
  stack: BenchStack;
  fixture: Fixture;
  receiver: Receiver;
  backlog: number;
  rounds: number;
  offers: number;
  groups: number;
  liftPurchases: number;
  readSeconds: number;
  readConnections: number;
  timeoutMs: number;
  runId: string;
  log: (line: string) => void;
}

/** The cumulative offers beside the cumulative side's percent offer: purchases of the drains complete some of both. */
const CUMULATIVE_REWARDS = [
  { kind: 'spend_x_get_y', spendMinor: 5_000, rewardMinor: 300, balanceType: 'cashback', repeatable: true },
  { kind: 'nth_purchase', purchases: 3, rewardMinor: 200, balanceType: 'cashback', repeatable: true },
];

/** The stacked side's merchant: its three offers, 5 %, 3 % (budgeted) and 2 %, all apply under a 10 % cap. */
const STACK_CAP_BPS = 1000;
const STACKED_OFFERS = [
  { cashbackRateBps: 500, priority: 2 },
  { cashbackRateBps: 300, priority: 1, budgetMinor: 1_000_000_000_000 },
  { cashbackRateBps: 200, priority: 0 },
];

/** The audience every targeted offer of the phase has: no excluded segment, and new at the merchant. */
const AUDIENCE = { excludeSegments: ['staff'], merchantHistory: { kind: 'new', lookbackDays: 365 } };

export async function measureTargeting(o: TargetingOptions): Promise<TargetingResult> {
  const db = new pg.Client({ connectionString: o.stack.databaseUrl });
  await db.connect();
  try {
    const lifecycle = await lifecycleRounds(o, db);
    const list = await offerList(o, db);
    o.log(`targeting: offer list over ${list.offers} offers, p99 ${list.p99Ms.toFixed(1)} ms${cpuPerReadNote(list)}`);
    o.log(`targeting: the same by relevance, p99 ${list.ranked.p99Ms.toFixed(1)} ms${cpuPerReadNote(list.ranked)}`);
    const { enrolment, offerId } = await enrolMillion(o, db);
    o.log(
      `targeting: ${enrolment.groups} groups enrolled in ${enrolment.seconds.toFixed(1)} s, ${enrolment.actionsPerThousandGroups.toFixed(2)} actions per 1,000`,
    );
    const lift = await liftReport(o, db, offerId);
    o.log(`targeting: lift report over ${enrolment.groups} groups in ${lift.seconds.toFixed(2)} s`);
    return { ...lifecycle, list, enrolment, lift };
  } finally {
    await db.end();
  }
}

/** A dining merchant with cashback only, seen by these issuers alone (null: every issuer). */
async function createMerchant(
  o: TargetingOptions,
  name: string,
  issuerIds: string[] | null,
  fields: Record<string, unknown> = {},
): Promise<string> {
  const operator = caller(o.stack.apiUrl, o.stack.operatorToken);
  const merchant = await operator('POST', '/admin/v1/merchants', {
    name,
    category: 'dining',
    issuerIds,
    brandedBalance: { enabled: false, spendMinimumMinor: 0, availabilityDelayDays: 0, expiryDays: 365 },
    ...fields,
  });
  return merchant.id as string;
}

async function createOffer(o: TargetingOptions, merchantId: string, fields: Record<string, unknown>): Promise<string> {
  const operator = caller(o.stack.apiUrl, o.stack.operatorToken);
  const offer = await operator('POST', `/admin/v1/merchants/${merchantId}/offers`, {
    title: 'Bench targeting',
    // A reward given whole has no flat rates.
    ...('reward' in fields ? {} : { cashbackRateBps: 500, brandedRateBps: 0 }),
    startsAt: new Date(Date.now() - 10 * DAY_MS).toISOString(),
    ...fields,
  });
  return offer.id as string;
}

/** Waits until every one of these offers has a completed enrolment run and none is processing. */
async function enrolled(db: pg.Client, offerIds: readonly string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { rows } = await db.query<{ completed: number; open: number; failed: number }>(
      `SELECT count(DISTINCT offer_id) FILTER (WHERE status = 'completed')::int AS completed,
              count(*) FILTER (WHERE status = 'processing')::int AS open,
              count(*) FILTER (WHERE status = 'failed')::int AS failed
         FROM offer_enrolment_run WHERE offer_id = ANY ($1)`,
      [offerIds],
    );
    const r = rows[0];
    if (r.failed > 0) throw new Error(`targeting: ${r.failed} enrolment runs failed`);
    if (r.completed === offerIds.length && r.open === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`targeting: enrolment runs of ${offerIds.length} offers not done in ${timeoutMs / 1000} s`);
}

async function lifecycleRounds(o: TargetingOptions, db: pg.Client) {
  const issuer = caller(o.stack.apiUrl, o.fixture.token);
  const only = [o.fixture.issuerId];
  const targetedMerchant = await createMerchant(o, 'Bench targeted', only);
  const targetedOffer = await createOffer(o, targetedMerchant, {
    activation: 'auto',
    audience: AUDIENCE,
    holdoutBps: HOLDOUT_BPS,
  });
  const twin = await createMerchant(o, 'Bench untargeted twin', only);
  await createOffer(o, twin, {});
  const cumulative = await createMerchant(o, 'Bench cumulative', only);
  await createOffer(o, cumulative, {});
  for (const reward of CUMULATIVE_REWARDS) await createOffer(o, cumulative, { reward });
  const stacked = await createMerchant(o, 'Bench stacked', only, { stacking: 'stack', stackCapBps: STACK_CAP_BPS });
  for (const fields of STACKED_OFFERS) await createOffer(o, stacked, fields);
  await enrolled(db, [targetedOffer], o.timeoutMs);
  const { rows } = await db.query<{ chg_id: string }>(
    `SELECT chg_id FROM offer_enrolment WHERE offer_id = $1 AND arm = 'treated'`,
    [targetedOffer],
  );
  const treated = new Set(rows.map((r) => r.chg_id));
  const groups = o.fixture.groups.filter((g) => treated.has(g.chgId));
  for (const g of groups)
    for (const m of [twin, cumulative, stacked])
      await issuer('PUT', `/api/v2/chg/${g.chgId}/merchant/${m}/activation`, {});
  const merchantOf = { targeted: targetedMerchant, untargeted: twin, cumulative, stacked };
  const rounds: TargetingRound[] = [];
  for (let round = 1; round <= o.rounds; round++) {
    // Alternated order, as in the budget phase: each drain runs a little slower than the one before.
    const order = ['untargeted', 'targeted', 'cumulative', 'stacked'] as const;
    const sides = round % 2 === 1 ? order : [...order].reverse();
    const result: Partial<TargetingRound> = {};
    for (const side of sides) {
      result[side] = await runLifecycleDrain({
        apiUrl: o.stack.apiUrl,
        fixture: { ...o.fixture, groups, merchantIds: [merchantOf[side]] },
        receiver: o.receiver,
        backlog: o.backlog,
        timeoutMs: o.timeoutMs,
        runId: `${o.runId}-targeting-${side}-${round}`,
        onTransaction: () => undefined,
      });
      o.log(`targeting: round ${round}, ${side}: ${result[side].steadyPerSecond.toFixed(1)}/s steady`);
    }
    rounds.push(result as TargetingRound);
  }
  const drain = await pendingAfterDrain(o.stack.databaseUrl, o.fixture.issuerId, `sus-${o.runId}-targeting-`, 30_000);
  return {
    rounds,
    treatedGroups: groups.length,
    fixtureGroups: o.fixture.groups.length,
    drain: { pending: drain.pending, trialBalanceMinor: drain.trialBalanceMinor },
  };
}

/**
 * `o.offers` opt-in targeted offers over merchants the fixture issuer alone sees, enrolled by
 * their runs, then the fixture groups' offer lists read by 32 connections. Opt-in: an auto offer
 * would also announce itself to every treated group, and the webhooks would share the machine.
 */
async function offerList(o: TargetingOptions, db: pg.Client): Promise<TargetingResult['list']> {
  const started = performance.now();
  const offerIds: string[] = [];
  for (let m = 0; offerIds.length < o.offers; m++) {
    const merchantId = await createMerchant(o, `Bench list merchant ${m}`, [o.fixture.issuerId]);
    for (let k = 0; k < OFFERS_PER_MERCHANT && offerIds.length < o.offers; k++)
      offerIds.push(
        await createOffer(o, merchantId, {
          title: `Bench list offer ${m}-${k}`,
          cashbackRateBps: 100 + k * 50,
          audience: AUDIENCE,
          holdoutBps: HOLDOUT_BPS,
        }),
      );
  }
  await enrolled(db, offerIds, o.timeoutMs);
  const enrolSeconds = (performance.now() - started) / 1000;
  o.log(`targeting: ${offerIds.length} targeted offers created and enrolled in ${enrolSeconds.toFixed(1)} s`);
  // The steady state a list is read in: the enrolments just written vacuumed (as autovacuum
  // leaves a table written long before; the list reads them from the index alone once their
  // pages are all visible), and the API's list warmed up (its code compiled, each process's
  // catalogue read) by reads that are not counted.
  await db.query('VACUUM ANALYZE offer_enrolment');
  const read = (seconds: number, query = '') =>
    runReads({
      apiUrl: o.stack.apiUrl,
      token: o.fixture.token,
      paths: o.fixture.groups.map((g) => `/api/v2/chg/${g.chgId}/offers${query}`),
      seconds,
      connections: o.readConnections,
    });
  // Where a read's CPU goes (the API, PostgreSQL, the bench's client): what a faster list must cut.
  const roots = { api: o.stack.api.pid!, worker: o.stack.worker.pid!, bench: process.pid };
  const measured = async (query = ''): Promise<ListReads> => {
    const before = cpuSnapshot(roots);
    const reads = await read(o.readSeconds, query);
    const spent = cpuBetween(before, cpuSnapshot(roots));
    const perRead = (group: CpuGroup) => (spent[group] * 1000) / Math.max(1, reads.requests);
    return {
      ...reads,
      cpuMsPerRead: Object.fromEntries(CPU_GROUPS.map((g) => [g, perRead(g)])) as Record<CpuGroup, number>,
    };
  };
  // Each list is measured on a machine the earlier work has left quiet (the offers' enrolment
  // runs completing, vacuum, the lifecycle's deliveries): a list's p99 is its own, not theirs.
  await quietBeforeMeasuring(roots, o.log, 'targeting: offer list');
  await read(LIST_WARM_UP_SECONDS);
  const list = await measured();
  // The same lists by relevance: each ranked by the group's own history, read in the same statement.
  await quietBeforeMeasuring(roots, o.log, 'targeting: offer list by relevance');
  await read(LIST_WARM_UP_SECONDS, '?sort=relevance');
  const ranked = await measured('?sort=relevance');
  return { ...list, ranked, offers: offerIds.length, enrolSeconds };
}

/** `groups` active groups of the issuer, created 60 days ago, a tenth carrying the excluded segment. */
async function seedGroups(db: pg.Client, issuerId: string, groups: number): Promise<void> {
  await db.query(
    `INSERT INTO cardholder_group (id, issuer_id, external_id, status, segments, created_at, updated_at)
     SELECT 'chg_' || gen_random_uuid(), $1, 'bench-targeting-' || n, 'active',
            CASE WHEN n % 10 = 0 THEN ARRAY['staff'] WHEN n % 3 = 0 THEN ARRAY['premium'] ELSE ARRAY[]::text[] END,
            now() - interval '60 days', now() - interval '60 days'
       FROM generate_series(1, $2) n`,
    [issuerId, groups],
  );
  await db.query('ANALYZE cardholder_group');
}

async function enrolMillion(o: TargetingOptions, db: pg.Client) {
  const operator = caller(o.stack.apiUrl, o.stack.operatorToken);
  const issuer = await operator('POST', '/admin/v1/issuers', {
    name: 'Bench targeting issuer',
    environment: 'sandbox',
  });
  o.log(`targeting: ${o.groups} groups written for the enrolment run`);
  const seedStarted = performance.now();
  await seedGroups(db, issuer.id, o.groups);
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  const merchantId = await createMerchant(o, 'Bench targeting million', [issuer.id]);
  // Started 30 days ago: the groups (60 days old) all enter at its start, and the lift report's
  // purchases fit between that and now.
  const offerId = await createOffer(o, merchantId, {
    activation: 'auto',
    audience: AUDIENCE,
    holdoutBps: HOLDOUT_BPS,
    startsAt: new Date(Date.now() - 30 * DAY_MS).toISOString(),
  });
  await enrolled(db, [offerId], o.timeoutMs);
  const { rows } = await db.query<{
    id: string;
    seconds: number;
    enrolled: number;
    treated: number;
    control: number;
    outside: number;
  }>(
    `SELECT id, extract(epoch FROM completed_at - created_at)::float8 AS seconds, groups_enrolled AS enrolled,
            groups_treated AS treated, groups_control AS control, groups_outside AS outside
       FROM offer_enrolment_run WHERE offer_id = $1 AND status = 'completed' ORDER BY created_at LIMIT 1`,
    [offerId],
  );
  const run = rows[0];
  const actions = await actionsOf(o.stack.temporalAddress, enrolmentRunWorkflowId(offerId, run.id));
  return {
    offerId,
    enrolment: {
      groups: run.enrolled,
      seedSeconds,
      seconds: run.seconds,
      actionsPerThousandGroups: (actions / run.enrolled) * 1000,
      treated: run.treated,
      control: run.control,
      outside: run.outside,
      holdoutPercent: HOLDOUT_BPS / 100,
      controlSharePercent: (run.control / (run.treated + run.control)) * 100,
    },
  };
}

/**
 * `o.liftPurchases` settled purchases at the offer's merchant, each of an enrolled group in the
 * audience drawn at random, dated in the offer's 30 days; a treated group's 5 % larger. Stored as
 * processed and handed over, so that no sweep takes them for work left undone.
 */
async function seedPurchases(db: pg.Client, offerId: string, purchases: number): Promise<void> {
  await db.query(
    `WITH arms AS (
       SELECT e.chg_id, e.issuer_id, e.arm, o.merchant_id, row_number() OVER () AS n
         FROM offer_enrolment e JOIN offer o ON o.id = e.offer_id
        WHERE e.offer_id = $1 AND e.in_audience),
     size AS (SELECT count(*) AS groups FROM arms),
     drawn AS (
       SELECT k, 1 + floor(random() * (SELECT groups FROM size))::bigint AS n FROM generate_series(1, $2) k)
     INSERT INTO ingested_event (id, issuer_id, kind, external_id, fingerprint, state, payload, chg_id, cardholder_id,
                                 card_id, amount_minor, currency, event_created_at, workflow_id, reward_status, merchant_id,
                                 processed_at, handed_over_at)
     SELECT 'txn_' || gen_random_uuid(), a.issuer_id, 'settled', 'bench-lift-' || d.k, 'bench', 'settled', '{}'::jsonb,
            a.chg_id, 'bench-cardholder', 'bench-card',
            CASE WHEN a.arm = 'treated' THEN 2000 * (100 + $3::int) / 100 ELSE 2000 END, 'usd',
            now() - interval '29 days' + random() * interval '28 days', 'bench-lift-' || d.k, 'not_matched',
            a.merchant_id, now(), now()
       FROM drawn d JOIN arms a ON a.n = d.n`,
    [offerId, purchases, SEEDED_LIFT_PERCENT],
  );
  // As autovacuum would have by the time anyone reads a lift: the enrolment run wrote a million
  // rows a minute ago; planned on the counts before it, the report once ran past the statement timeout.
  await db.query('ANALYZE ingested_event, offer_enrolment');
}

async function liftReport(o: TargetingOptions, db: pg.Client, offerId: string): Promise<TargetingResult['lift']> {
  const seedStarted = performance.now();
  await seedPurchases(db, offerId, o.liftPurchases);
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  const operator = caller(o.stack.apiUrl, o.stack.operatorToken);
  const callsSeconds: number[] = [];
  let report: { liftBps: number | null; ci95Bps: [number | null, number | null] } | undefined;
  for (let call = 0; call < 3; call++) {
    const started = performance.now();
    report = await operator('GET', `/admin/v1/offers/${offerId}/lift`);
    callsSeconds.push((performance.now() - started) / 1000);
  }
  return {
    purchases: o.liftPurchases,
    seedSeconds,
    seconds: Math.max(...callsSeconds),
    callsSeconds,
    liftBps: report!.liftBps,
    ci95Bps: report!.ci95Bps,
  };
}

/** The targeted drains' mean steady rate as a share of the untargeted ones'. */
const meanOf = (rounds: readonly TargetingRound[], side: keyof TargetingRound) =>
  rounds.reduce((s, r) => s + r[side]!.steadyPerSecond, 0) / rounds.length;

export function targetingShare(rounds: readonly TargetingRound[]): number {
  return (meanOf(rounds, 'targeted') / meanOf(rounds, 'untargeted')) * 100;
}

/** The lifecycle of an offer mechanics side as a share of the percent twin's; null in runs without that side. */
export function mechanicsShare(rounds: readonly TargetingRound[], side: 'cumulative' | 'stacked'): number | null {
  if (rounds.some((r) => !r[side])) return null;
  return (meanOf(rounds, side) / meanOf(rounds, 'untargeted')) * 100;
}
