// Property: offers of every kind at one merchant (a percent offer with a budget, a tiered offer,
// spend X get Y and the Nth purchase, their terms drawn; the merchant's stacking drawn, so the
// percent and tiered offers apply one at a time or stacked under a cap; spend X get Y with a budget
// and an issuer's share, or without), a group's random purchases, partial and full refunds in any
// order, purchases the matcher misses counted by an approved claim, and payouts of what is payable
// (so that a refund after one leaves the group owing): after every step, for each cumulative offer,
// the group's progress is what its purchases net of refunds add up to, the completions whose reward stands are min(maxRedemptions, completions(measure)) of
// them, each paying Y (or the rate of the purchase that reached it; under a budget, what the budget
// had left, so at most Y, and together what the budget has used), and the stored progress says the
// same as the ledger's events; the issuer's share stands for the standing completions alone; the
// issuer's trial balance is 0, no liability is below zero, and no budget is ever overspent. At
// least 10,000 steps per run, through the real settlement and refund activities on PostgreSQL.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startTestApp, newIssuer, type TestApp, type TestIssuer } from '../../helpers/app';
import { createMerchant, createOffer } from '../../helpers/catalogue';
import { settledEvent, cardOf } from '../../helpers/events';
import { groupBody } from '../../helpers/groups';
import { assertLedgerHealthy } from '../../helpers/ledger';
import { createLogger } from '../../../core/logger';
import { settleTransaction } from '../../../activities/lifecycle/settle';
import { clawBackRefund } from '../../../activities/lifecycle/refund';
import { createClaimActivities } from '../../../activities/claims';
import { payGroupNow } from '../../../api/payouts/store';
import { rewardsSummary } from '../../../api/balances/summary';
import { trialBalance } from '../../../core/domain/trial-balance';
import { isLiability } from '../../../core/ledger';
import { contributionOf, rewardedCompletions, type CumulativeReward } from '../../../core/rules/reward-kinds';
import { issuerShareOf } from '../../../core/rules/funding';
import type { LifecycleDeps } from '../../../activities/lifecycle/deps';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 40);
const STEPS = 250;
const BUDGET = 3_000;

interface Terms {
  spend: Extract<CumulativeReward, { kind: 'spend_x_get_y' }>;
  nth: Extract<CumulativeReward, { kind: 'nth_purchase' }>;
  spendMin: number;
  nthMin: number;
  spendMax: number | null;
  nthMax: number | null;
  /** The spend offer's budget (null: none) and issuer's share. */
  spendBudget: number | null;
  spendIssuerShareBps: number;
  stacking: { stacking: 'best_of' | 'priority' } | { stacking: 'stack'; stackCapBps: number };
}

const termsArb: fc.Arbitrary<Terms> = fc.record({
  spend: fc.record({
    kind: fc.constant('spend_x_get_y' as const),
    spendMinor: fc.integer({ min: 2_000, max: 20_000 }),
    rewardMinor: fc.integer({ min: 1, max: 2_000 }),
    balanceType: fc.constantFrom('cashback' as const, 'branded' as const),
    repeatable: fc.boolean(),
  }),
  nth: fc.oneof(
    fc.record({
      kind: fc.constant('nth_purchase' as const),
      purchases: fc.integer({ min: 1, max: 5 }),
      rewardMinor: fc.integer({ min: 1, max: 1_500 }),
      balanceType: fc.constantFrom('cashback' as const, 'branded' as const),
      repeatable: fc.boolean(),
    }),
    fc.record({
      kind: fc.constant('nth_purchase' as const),
      purchases: fc.integer({ min: 1, max: 5 }),
      rateBps: fc.integer({ min: 1, max: 3_000 }),
      balanceType: fc.constantFrom('cashback' as const, 'branded' as const),
      repeatable: fc.boolean(),
    }),
  ),
  spendMin: fc.integer({ min: 0, max: 3_000 }),
  nthMin: fc.integer({ min: 0, max: 3_000 }),
  spendMax: fc.option(fc.integer({ min: 1, max: 6 }), { nil: null }),
  nthMax: fc.option(fc.integer({ min: 1, max: 6 }), { nil: null }),
  spendBudget: fc.option(fc.integer({ min: 1, max: 6_000 }), { nil: null }),
  spendIssuerShareBps: fc.constantFrom(0, 2_500, 10_000),
  stacking: fc.oneof(
    fc.record({ stacking: fc.constantFrom('best_of' as const, 'priority' as const) }),
    fc.record({ stacking: fc.constant('stack' as const), stackCapBps: fc.integer({ min: 0, max: 600 }) }),
  ),
});

type Step =
  | { kind: 'purchase'; amount: number }
  | { kind: 'claimed'; amount: number }
  | { kind: 'refund'; purchase: number; percent: number }
  | { kind: 'payout' };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant('purchase' as const), amount: fc.integer({ min: 1, max: 12_000 }) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('refund' as const),
      purchase: fc.nat(),
      percent: fc.integer({ min: 1, max: 120 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'payout' as const }) },
  // A purchase the matcher misses, counted by its claim's approval.
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('claimed' as const), amount: fc.integer({ min: 1, max: 12_000 }) }),
  },
);

describe('cumulative offers under random purchases, refunds and payouts (property)', function () {
  this.timeout(900_000);
  let app: TestApp;
  let issuer: TestIssuer;
  let steps = 0;
  let approvedClaims = 0;
  before(async () => {
    app = await startTestApp();
  });
  after(() => app.close());

  it(`keeps rewards equal to the completions of the measure, progress equal to the ledger, after each of ${RUNS * STEPS} steps`, async () => {
    const deps: LifecycleDeps = { db: app.db, logger: createLogger('silent'), clock: { now: () => new Date() } };
    await fc.assert(
      fc.asyncProperty(termsArb, fc.array(stepArb, { minLength: STEPS, maxLength: STEPS }), async (terms, sequence) => {
        // An issuer per run: the books checked after each step are this run's alone.
        issuer = await newIssuer(app);
        const merchant = await createMerchant(app, {
          brandedBalance: { enabled: true, spendMinimumMinor: 0, availabilityDelayDays: 0, expiryDays: 365 },
          ...terms.stacking,
        });
        const start = new Date(Date.now() - 60_000).toISOString();
        const common = { startsAt: start, returnPeriodDays: 0 };
        const budgeted = await createOffer(app, merchant.id, {
          ...common,
          cashbackRateBps: 200,
          budgetMinor: BUDGET,
          budgetPeriod: null,
        });
        await createOffer(app, merchant.id, {
          ...common,
          reward: { kind: 'tiered', tiers: [{ minSpendMinor: 5_000, cashbackRateBps: 300, brandedRateBps: 100 }] },
          priority: 1,
        });
        const spendOffer = await createOffer(app, merchant.id, {
          ...common,
          reward: terms.spend,
          minSpendMinor: terms.spendMin,
          maxRedemptionsPerChg: terms.spendMax,
          budgetMinor: terms.spendBudget,
          budgetPeriod: null,
          funding: { issuerShareBps: terms.spendIssuerShareBps },
        });
        const nthOffer = await createOffer(app, merchant.id, {
          ...common,
          reward: terms.nth,
          minSpendMinor: terms.nthMin,
          maxRedemptionsPerChg: terms.nthMax,
        });
        const group = (await issuer.call('POST', '/api/v2/chg', groupBody())).body;
        assert.equal(
          (await issuer.call('PUT', `/api/v2/chg/${group.id}/merchant/${merchant.id}/activation`, {})).status,
          201,
        );
        const card = cardOf(group);
        const cumulative = [
          {
            offerId: spendOffer.id,
            reward: terms.spend as CumulativeReward,
            min: terms.spendMin,
            max: terms.spendMax,
            budget: terms.spendBudget,
            issuerShareBps: terms.spendIssuerShareBps,
          },
          {
            offerId: nthOffer.id,
            reward: terms.nth as CumulativeReward,
            min: terms.nthMin,
            max: terms.nthMax,
            budget: null,
            issuerShareBps: 0,
          },
        ];
        const purchases: Array<{ externalId: string; amount: number; refunded: number }> = [];
        for (const [index, step] of sequence.entries()) {
          const now = new Date().toISOString();
          if (step.kind === 'purchase') {
            const event = settledEvent(card, {
              amount: step.amount,
              merchantId: merchant.id,
              createdAt: now,
              settledAt: now,
            });
            await settleTransaction(deps, { eventId: await ingest(event) });
            purchases.push({ externalId: event.id, amount: step.amount, refunded: 0 });
          } else if (step.kind === 'claimed') {
            const event = settledEvent(card, {
              amount: step.amount,
              merchantDescriptor: `UNKNOWN SHOP ${index}`,
              createdAt: now,
              settledAt: now,
            });
            const eventId = await ingest(event);
            await settleTransaction(deps, { eventId });
            await claimApproved(group.id, eventId, merchant.id, index);
            purchases.push({ externalId: event.id, amount: step.amount, refunded: 0 });
          } else if (step.kind === 'refund' && purchases.length > 0) {
            const purchase = purchases[step.purchase % purchases.length];
            const left = purchase.amount - purchase.refunded;
            if (left > 0) {
              const amount = Math.min(left, Math.max(1, Math.floor((purchase.amount * step.percent) / 100)));
              const refund = settledEvent(card, {
                ...{ amount, merchantId: merchant.id, createdAt: now, settledAt: now },
                ...{ state: 'refunded', relatedTransactionId: purchase.externalId },
              });
              await clawBackRefund(deps, { eventId: await ingest(refund) });
              purchase.refunded += amount;
            }
          } else if (step.kind === 'payout') {
            const summary = (await rewardsSummary(app.db, issuer.id, group.id, new Date()))!;
            if (summary.cashback.payableMinor > 0)
              await payGroupNow(
                app.db,
                { issuerId: issuer.id, idempotencyKey: `${group.id}:${index}`, at: new Date() },
                group.id,
                {},
              );
          }
          steps++;
          let issuerShare = 0;
          for (const offer of cumulative) issuerShare += await checkCumulative(offer, group.id, purchases);
          await checkBooks([budgeted.id, spendOffer.id], issuerShare);
        }
        await assertLedgerHealthy(app.db, issuer.id);
      }),
      { numRuns: RUNS, seed: 20261203, endOnFailure: true },
    );
    assert.ok(steps >= 10_000, `${steps} steps`);
    assert.ok(approvedClaims > RUNS, `${approvedClaims} claims approved: missed purchases were counted`);
  });

  /** A claim for the missed purchase at the merchant, decided and, when in review, approved. */
  async function claimApproved(chgId: string, transactionId: string, merchantId: string, index: number) {
    const claims = createClaimActivities({ db: app.db, clock: { now: () => new Date() } });
    const claimId = `clm_property_${chgId}_${index}`;
    await app.db.claim.create({
      data: {
        id: claimId,
        issuerId: issuer.id,
        chgId,
        transactionId,
        reason: 'missing_reward',
        merchantId,
        workflowId: `claim/${issuer.id}/${claimId}`,
      },
    });
    const decided = await claims.decideClaim({ claimId });
    if (decided.status === 'needs_review')
      assert.equal(
        (await claims.resolveClaim({ claimId, operator: { decision: 'approve', actor: 'property' } })).status,
        'approved',
      );
    else assert.equal(decided.status, 'rejected', `claim ${claimId}: ${decided.status}`);
    if (decided.status === 'needs_review') approvedClaims++;
  }

  async function ingest(event: Record<string, unknown>): Promise<string> {
    const res = await issuer.call('POST', '/api/v1/incoming-txn', event);
    assert.equal(res.status, 204, res.text);
    const row = await app.db.ingestedEvent.findUniqueOrThrow({
      where: { issuerId_kind_externalId: { issuerId: issuer.id, kind: 'settled', externalId: event.id as string } },
    });
    return row.id;
  }

  /**
   * The model's measure and completions against the stored progress and the ledger's completion
   * events; the issuer's share the standing completions carry.
   */
  async function checkCumulative(
    offer: {
      offerId: string;
      reward: CumulativeReward;
      min: number;
      max: number | null;
      budget: number | null;
      issuerShareBps: number;
    },
    chgId: string,
    purchases: ReadonlyArray<{ amount: number; refunded: number }>,
  ): Promise<number> {
    const measure = purchases.reduce(
      (sum, p) => sum + contributionOf(offer.reward, p.amount - p.refunded, offer.min),
      0,
    );
    const expected = rewardedCompletions(offer.reward, measure, offer.max);
    // One statement: the stored progress, and what stands of each completion (earned less clawed back).
    const [row] = await app.db.$queryRaw<
      Array<{
        measure: string | null;
        rewarded: number | null;
        kept: Array<[number, string]> | null;
        used: string | null;
      }>
    >`
      SELECT (SELECT measure::text FROM offer_progress WHERE offer_id = ${offer.offerId} AND chg_id = ${chgId}) AS measure,
             (SELECT used_minor::text FROM offer_budget WHERE offer_id = ${offer.offerId}) AS used,
             (SELECT rewarded FROM offer_progress WHERE offer_id = ${offer.offerId} AND chg_id = ${chgId}) AS rewarded,
             (SELECT json_agg(json_build_array(k.completion, k.net::text)) FROM (
                SELECT completion, sum(CASE WHEN type LIKE '%_earned' THEN amount_minor ELSE -amount_minor END) AS net
                  FROM reward_event WHERE chg_id = ${chgId} AND offer_id = ${offer.offerId} AND completion IS NOT NULL
                 GROUP BY completion) k WHERE k.net <> 0) AS kept`;
    assert.deepEqual(
      [Number(row.measure ?? 0), row.rewarded ?? 0],
      [measure, expected],
      `progress of ${offer.reward.kind}`,
    );
    const kept = (row.kept ?? []).map(([k, net]) => [k, Number(net)] as const);
    const completions = Array.from({ length: expected }, (_, i) => i + 1);
    const keptNumbers = kept.map(([k]) => k).sort((a, b) => a - b);
    for (const [, amount] of kept) assert.ok(amount > 0, `a completion keeps ${amount}`);
    if (offer.budget !== null) {
      // The budget pays completions as far as it reaches: each at most Y, together what it has used.
      const total = kept.reduce((sum, [, amount]) => sum + amount, 0);
      assert.equal(total, Number(row.used ?? 0), 'the budget used is what the standing completions keep');
      assert.ok(total <= offer.budget, `the budget of ${offer.budget} gave ${total}`);
      assert.ok(
        keptNumbers.every((k) => completions.includes(k)),
        `the standing completions ${keptNumbers}`,
      );
      for (const [, amount] of kept) assert.ok(amount <= offer.reward.rewardMinor!, 'none pays more than Y');
      // Unpaid completions are those the budget could not reach: with money left, every one pays Y.
      if (total + offer.reward.rewardMinor! <= offer.budget)
        assert.deepEqual(keptNumbers, completions, 'with the budget not reached, every completion stands');
    } else if (offer.reward.rewardMinor !== undefined) {
      assert.deepEqual(keptNumbers, completions, `the standing completions of ${offer.reward.kind}`);
      for (const [, amount] of kept) assert.equal(amount, offer.reward.rewardMinor, 'each pays Y');
    } else {
      // A rate of a small purchase can round to 0: that completion counts and posts nothing.
      assert.ok(
        keptNumbers.every((k) => completions.includes(k)),
        `the standing completions ${keptNumbers} of ${offer.reward.kind}, of ${expected}`,
      );
    }
    return kept.reduce((sum, [, amount]) => sum + issuerShareOf(amount, offer.issuerShareBps), 0);
  }

  /**
   * Trial balance 0, no liability below zero, no budget overspent, and the issuer's funding what
   * the standing completions' shares add up to (no other offer is funded).
   */
  async function checkBooks(budgetedOfferIds: string[], issuerShareMinor: number): Promise<void> {
    const books = await trialBalance(app.db, { issuerId: issuer.id });
    assert.equal(books.totalMinor, 0, 'trial balance');
    for (const account of books.accounts)
      if (isLiability(account.kind)) assert.ok(account.balanceMinor >= 0, `${account.id} = ${account.balanceMinor}`);
    const funding = books.accounts.find((a) => a.kind === 'issuer_funding');
    assert.equal(Math.abs(funding?.balanceMinor ?? 0), issuerShareMinor, "the issuer's share");
    const budgets = await app.db.offerBudget.findMany({
      where: { offerId: { in: budgetedOfferIds } },
      include: { offer: { select: { budgetMinor: true } } },
    });
    for (const b of budgets) assert.ok(b.usedMinor <= b.offer.budgetMinor!, `budget used ${b.usedMinor}`);
  }
});
