// Property: whatever sequence of purchases, refunds, customer-service adjustments, payouts,
// write-offs, time jumps (across the cashback return window) and expiry runs a group goes through,
// the ledger stays healthy, the rewards summary is exactly what the ledger says, no cashback on hold
// is ever paid out, and the group keeps exactly what the rules give for its purchases net of
// refunds, plus its adjustments: a refund after payout is owed, never a free reward.
// Some purchases are in euros (they earn nothing) and some refunds in yen: ingestion refuses a
// refund in another currency than its purchase, and one stored before that rule (made here by
// changing a stored refund's currency) claws back nothing.
// Events are ingested over HTTP (stored, not handed to Temporal); the real settlement, refund
// and expiry activities then run directly with a controlled clock (`atMs`), for speed.
// Adjustments (credits and debits of cashback or branded balance, some debits beyond what the
// group holds, some replays of an earlier key) are posted through postAdjustment at that clock;
// write-offs forgive part, all or more than what the group owes. Payouts are a single group's
// (payGroupNow) or a run limited to the group (its activities, a chunk of one group at a time).
// A second merchant's offer is funded: a monthly budget (shared by every group, so sequences run
// it out and cross into new months), an issuer share and a commission. Statements of the issuer are
// billed for the step's month and paid in part; after every step no budget is overspent, and the
// statements issued plus the one each merchant would get now, less what was paid, equal the
// merchants' receivables, every transfer counted once.
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
import { expireDueGrants } from '../../../activities/expiry';
import { rewardsSummary } from '../../../api/balances/summary';
import { fromDbMinor } from '../../../core/ledger';
import { ApiError } from '../../../core/errors';
import { inTransaction } from '../../../core/domain/ledger';
import { postAdjustment, type Adjustment, type AdjustmentRequest } from '../../../core/domain/adjustments';
import { payGroupNow } from '../../../api/payouts/store';
import { createPayoutActivities } from '../../../activities/payouts';
import { newId } from '../../../core/ids';
import { ADJUSTMENT_REASON_CODES, type AdjustmentReasonCode, type BalanceType } from '../../../core/rules/adjustments';
import type { LifecycleDeps } from '../../../activities/lifecycle/deps';
import { sqlTransaction } from '../../../prisma/sql-transaction';
import { billChunk, previewChunk, type BilledStatement } from '../../../core/domain/statements';
import { payStatement } from '../../../api/statements/store';
import { periodOf } from '../../../core/rules/statements';
import { createClaimActivities } from '../../../activities/claims';
import { claimCreditClawedBack } from '../../../core/rules/settlement';

const DAY_MS = 86_400_000;
/**
 * The calendar is part of a sequence, drawn from the seed with its steps: each starts at an instant
 * of a fixed stretch of two months (any day, any time of day), so a seed walks the same month turns
 * and budget months whatever day the test runs, and a failing seed replays exactly on any day.
 */
const FIRST_START_MS = Date.UTC(2026, 0, 1);
/** The offers start before every sequence. */
const OFFERS_START_MS = FIRST_START_MS - 10 * DAY_MS;
/** The funded offer's monthly budget: a few purchases' worth, so sequences run it out. */
const FUNDED_BUDGET = 4_000;

type RefundCurrency = 'same' | 'jpy' | 'stored_jpy';

type Step =
  // `funded`: at the merchant whose offer has a budget, an issuer share and a commission.
  // `unmatched`: a descriptor no merchant's rules match, so it earns nothing until a claim names one.
  | { kind: 'purchase'; amount: number; currency: 'usd' | 'eur'; funded?: boolean; unmatched?: boolean }
  // A cardholder's claim that one purchase's reward is missing at the (unfunded) merchant, decided
  // by the rules, then approved or rejected by an operator when it goes to review.
  | { kind: 'claim'; purchase: number; approve: boolean }
  // Bills the issuer's merchants for the step's month.
  | { kind: 'bill' }
  // Pays `percent` of what one of the issuer's statements still has due.
  | { kind: 'pay'; statement: number; percent: number }
  | { kind: 'refund'; purchase: number; percent: number; currency: RefundCurrency }
  | { kind: 'jump'; days: number }
  | { kind: 'expire' }
  | { kind: 'payout'; mode: 'run' | 'group'; minimum: number }
  // A write-off of `percent` of what the group owes (over 100: more than it owes).
  | { kind: 'writeoff'; percent: number }
  // A credit of `amount`, or a debit of `percent` of what the group can be debited (over 100:
  // beyond it); `replay` (when earlier adjustments succeeded) sends one of them again instead.
  | {
      kind: 'adjust';
      balanceType: BalanceType;
      direction: 'credit' | 'debit';
      amount: number;
      percent: number;
      reasonCode: AdjustmentReasonCode;
      replay: number | null;
    };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('purchase' as const),
      amount: fc.integer({ min: 1, max: 20_000 }),
      currency: fc.constantFrom('usd', 'usd', 'usd', 'usd', 'eur'),
      // One purchase in four at the funded merchant: enough to run its budget out now and then.
      funded: fc.constantFrom(false, false, false, true),
      unmatched: fc.constantFrom(false, false, false, true),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'bill' as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('claim' as const),
      purchase: fc.nat({ max: 20 }),
      approve: fc.constantFrom(true, true, true, false),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('pay' as const),
      statement: fc.nat({ max: 20 }),
      percent: fc.oneof(fc.integer({ min: 1, max: 99 }), fc.constant(100)),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('refund' as const),
      purchase: fc.nat({ max: 20 }),
      percent: fc.integer({ min: 1, max: 100 }),
      currency: fc.constantFrom<RefundCurrency>('same', 'same', 'same', 'jpy', 'stored_jpy'),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('jump' as const), days: fc.integer({ min: 1, max: 10 }) }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'expire' as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('payout' as const),
      mode: fc.constantFrom<'run' | 'group'>('run', 'group'),
      minimum: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 2_000 })),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('writeoff' as const),
      percent: fc.oneof(fc.integer({ min: 1, max: 99 }), fc.constant(100), fc.integer({ min: 101, max: 150 })),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('adjust' as const),
      balanceType: fc.constantFrom<BalanceType>('cashback', 'branded'),
      direction: fc.constantFrom<'credit' | 'debit'>('credit', 'debit'),
      amount: fc.integer({ min: 1, max: 3_000 }),
      // A share of the balance, all of it, or more than it holds.
      percent: fc.oneof(fc.integer({ min: 1, max: 99 }), fc.constant(100), fc.integer({ min: 101, max: 150 })),
      reasonCode: fc.constantFrom(...ADJUSTMENT_REASON_CODES.filter((r) => r !== 'write_off')),
      replay: fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.nat({ max: 20 }) }),
    }),
  },
);

const startArb = fc.integer({ min: FIRST_START_MS, max: FIRST_START_MS + 59 * DAY_MS - 1 });
// size 'max': lengths spread up to maxLength (the default size keeps arrays to about 10 steps).
const stepsArb = fc.array(stepArb, { minLength: 1, maxLength: 16, size: 'max' });

describe('rewards under random purchases, refunds, adjustments, payouts, time jumps and expiry (property)', function () {
  this.timeout(300_000);
  let app: TestApp;
  let issuer: TestIssuer;
  let merchantId: string;
  let fundedMerchantId: string;
  let fundedOfferId: string;
  let clockMs = OFFERS_START_MS;
  before(async () => {
    // The API's clock is the sequence's: events are dated at it and ingestion checks them against it.
    app = await startTestApp({ clock: { now: () => new Date(clockMs) } });
    issuer = await newIssuer(app);
    // Short delays and expiry so a sequence crosses both; a spend minimum so some purchases cannot spend.
    // Branded enabled: branded adjustments are posted at this merchant too.
    const merchant = await createMerchant(app, {
      brandedBalance: { enabled: true, spendMinimumMinor: 300, availabilityDelayDays: 2, expiryDays: 12 },
    });
    merchantId = merchant.id;
    // A return window shorter than the issuer's 30 days, so a sequence's jumps cross it.
    await createOffer(app, merchantId, {
      cashbackRateBps: 300,
      brandedRateBps: 1000,
      startsAt: new Date(OFFERS_START_MS).toISOString(),
      returnPeriodDays: 5,
    });
    // The funded merchant: a monthly budget every group draws on, an issuer share, a commission.
    const funded = await createMerchant(app, {
      brandedBalance: { enabled: true, spendMinimumMinor: 0, availabilityDelayDays: 1, expiryDays: 20 },
    });
    fundedMerchantId = funded.id;
    fundedOfferId = (
      await createOffer(app, fundedMerchantId, {
        cashbackRateBps: 500,
        brandedRateBps: 200,
        startsAt: new Date(OFFERS_START_MS).toISOString(),
        budgetMinor: FUNDED_BUDGET,
        budgetPeriod: 'month',
        funding: { issuerShareBps: 3000 },
        commission: { rateBps: 150, flatMinor: 20 },
      })
    ).id;
  });
  after(() => app.close());

  it('keeps the ledger healthy, no balance negative, and the summary equal to the ledger after every step', async () => {
    const deps: LifecycleDeps = { db: app.db, logger: createLogger('silent'), clock: { now: () => new Date() } };
    await fc.assert(
      fc.asyncProperty(stepsArb, startArb, async (steps, start) => {
        // The sequence's clock starts at its drawn instant, before its group is activated: an activation
        // dated at the clock a previous sequence's jumps left would come after every purchase of this one.
        let atMs = start;
        clockMs = atMs;
        const group = (await issuer.call('POST', '/api/v2/chg', groupBody())).body;
        for (const m of [merchantId, fundedMerchantId])
          assert.equal((await issuer.call('PUT', `/api/v2/chg/${group.id}/merchant/${m}/activation`, {})).status, 201);
        const card = cardOf(group);
        atMs += 1000;
        clockMs = atMs;
        const purchases: {
          externalId: string;
          amount: number;
          currency: string;
          refunded: number;
          merchantId: string;
          unmatched: boolean;
        }[] = [];
        const adjustments: Posted[] = [];
        for (const [index, step] of steps.entries()) {
          if (step.kind === 'purchase') {
            const dated = { createdAt: new Date(atMs).toISOString(), settledAt: new Date(atMs).toISOString() };
            const at = step.funded === true ? fundedMerchantId : merchantId;
            const event = settledEvent(card, {
              amount: step.amount,
              currency: step.currency,
              ...(step.unmatched === true
                ? { merchantId: undefined, merchantDescriptor: `NOBODY ${group.id} ${index}` }
                : { merchantId: at }),
              ...dated,
            });
            const eventId = await ingest(event);
            await settleTransaction(deps, { eventId, atMs });
            purchases.push({
              externalId: event.id,
              amount: step.amount,
              currency: step.currency,
              refunded: 0,
              merchantId: at,
              unmatched: step.unmatched === true,
            });
          } else if (step.kind === 'refund' && purchases.length > 0) {
            const purchase = purchases[step.purchase % purchases.length];
            const amount = Math.max(1, Math.floor((purchase.amount * step.percent) / 100));
            const refund = settledEvent(card, {
              createdAt: new Date(atMs).toISOString(),
              settledAt: new Date(atMs).toISOString(),
              state: 'refunded',
              amount,
              currency: step.currency === 'jpy' ? 'jpy' : purchase.currency,
              relatedTransactionId: purchase.externalId,
              merchantId: purchase.merchantId,
              ...(purchase.unmatched ? { merchantId: undefined, merchantDescriptor: 'NOBODY' } : {}),
            });
            if (step.currency === 'jpy') await refuseMismatch(refund);
            else if (await refundStored(refund, step.currency === 'stored_jpy', atMs)) purchase.refunded += amount;
          } else if (step.kind === 'adjust') {
            if (step.replay !== null && adjustments.length > 0)
              await replayAdjustment(adjustments[step.replay % adjustments.length], group.id, atMs);
            else {
              const posted = await adjust(step, group.id, `${group.id}:${index}`, atMs);
              if (posted) adjustments.push(posted);
            }
          } else if (step.kind === 'claim' && purchases.length > 0) {
            await claim(step, group.id, purchases[step.purchase % purchases.length].externalId, atMs);
          } else if (step.kind === 'payout') {
            await payOut(step, group.id, `${group.id}:${index}`, atMs);
          } else if (step.kind === 'writeoff') {
            await writeOff(step, group.id, `${group.id}:${index}`, atMs);
          } else if (step.kind === 'bill') {
            await bill(atMs);
          } else if (step.kind === 'pay') {
            await payStatementShare(step, `${group.id}:${index}`);
          } else if (step.kind === 'jump') {
            atMs += step.days * DAY_MS;
            clockMs = atMs;
          } else if (step.kind === 'expire') {
            // Small batches, so runs with several expired grants need more than one.
            for (let batch = 0; batch < 50; batch++) {
              const result = await expireDueGrants(
                { db: app.db, logger: deps.logger },
                { atMs, batchSize: 2, issuerId: issuer.id },
              );
              assert.equal(result.failed, 0);
              if (!result.more) break;
            }
          }
          if ((step.kind === 'purchase' || step.kind === 'refund') && billed.months.has(periodOf(new Date(atMs))))
            billed.stragglers++;
          await checkLedgerAgrees(group.id, atMs);
          await checkKeptByTheRules(group.id, purchases, atMs);
          await checkClaimCredits(purchases);
          await checkBudgetsAndStatements();
        }
      }),
      {
        numRuns: 40,
        seed: 20261122,
        endOnFailure: true,
        // Refunds owed more cashback than the group holds: once because a refund's branded
        // shortfall emptied it, once because a customer-service debit did. Each failed the whole
        // refund before its clawback was bounded by the balance.
        examples: [
          // A refund stored in another currency takes nothing back, and must not count as refunded
          // for the next one (which took back ~184 too much when it did).
          [
            [
              { kind: 'purchase', amount: 11_834, currency: 'usd' },
              { kind: 'refund', purchase: 0, percent: 44, currency: 'same' },
              { kind: 'refund', purchase: 0, percent: 12, currency: 'stored_jpy' },
              { kind: 'refund', purchase: 0, percent: 44, currency: 'same' },
            ],
            Date.UTC(2026, 0, 20, 12, 0),
          ],
          // A claim approved for an unmatched purchase after a partial refund, then refunds that
          // complete it: the credit is net of the first and taken back by the rest.
          [
            [
              { kind: 'purchase', amount: 10_000, currency: 'usd', unmatched: true },
              { kind: 'refund', purchase: 0, percent: 40, currency: 'same' },
              { kind: 'claim', purchase: 0, approve: true },
              { kind: 'payout', mode: 'group', minimum: 1 },
              { kind: 'jump', days: 10 },
              { kind: 'jump', days: 10 },
              { kind: 'jump', days: 11 },
              { kind: 'payout', mode: 'group', minimum: 1 },
              { kind: 'refund', purchase: 0, percent: 30, currency: 'same' },
              { kind: 'purchase', amount: 5_000, currency: 'usd' },
              {
                kind: 'adjust',
                balanceType: 'cashback',
                direction: 'credit',
                amount: 100,
                percent: 1,
                reasonCode: 'goodwill',
                replay: null,
              },
              { kind: 'refund', purchase: 0, percent: 30, currency: 'same' },
            ],
            Date.UTC(2026, 1, 3, 8, 0),
          ],
          [
            [
              { kind: 'purchase', amount: 10_000, currency: 'usd' },
              { kind: 'jump', days: 2 },
              { kind: 'purchase', amount: 20_000, currency: 'usd' },
              { kind: 'refund', purchase: 0, percent: 100, currency: 'same' },
              { kind: 'refund', purchase: 1, percent: 100, currency: 'same' },
            ],
            Date.UTC(2026, 0, 14, 9, 30),
          ],
          [
            [
              { kind: 'purchase', amount: 4_875, currency: 'usd' },
              {
                kind: 'adjust',
                balanceType: 'cashback',
                direction: 'debit',
                amount: 1,
                percent: 96,
                reasonCode: 'correction',
                replay: null,
              },
              { kind: 'refund', purchase: 0, percent: 69, currency: 'same' },
            ],
            Date.UTC(2026, 1, 27, 23, 0),
          ],
          // A funded purchase billed, refunded in part in the same month after its statement (the
          // clawback waits for the next one), billed again a month later, and paid; then the budget
          // runs out at the edge and a new month gives it back.
          [
            [
              { kind: 'purchase', amount: 20_000, currency: 'usd', funded: true },
              { kind: 'bill' },
              { kind: 'refund', purchase: 0, percent: 40, currency: 'same' },
              { kind: 'bill' },
              { kind: 'pay', statement: 0, percent: 50 },
              // 33 days: past the end of the month whatever day the sequence starts on (30 days
              // from the 1st of a 31-day month stay in it).
              { kind: 'jump', days: 11 },
              { kind: 'jump', days: 11 },
              { kind: 'jump', days: 11 },
              { kind: 'bill' },
              { kind: 'pay', statement: 0, percent: 100 },
              { kind: 'purchase', amount: 20_000, currency: 'usd', funded: true },
              { kind: 'purchase', amount: 20_000, currency: 'usd', funded: true },
              { kind: 'purchase', amount: 20_000, currency: 'usd', funded: true },
              { kind: 'purchase', amount: 20_000, currency: 'usd', funded: true },
              { kind: 'refund', purchase: 1, percent: 100, currency: 'same' },
              { kind: 'jump', days: 10 },
            ],
            FIRST_START_MS,
          ],
          // The double dip: cashback paid out after its window, then the purchase refunded; the group
          // owes it, its next purchase repays part, and the issuer forgives the rest.
          [
            [
              { kind: 'purchase', amount: 10_000, currency: 'usd' },
              { kind: 'payout', mode: 'run', minimum: 1 },
              { kind: 'jump', days: 6 },
              { kind: 'payout', mode: 'run', minimum: 1 },
              { kind: 'refund', purchase: 0, percent: 100, currency: 'same' },
              { kind: 'purchase', amount: 5_000, currency: 'usd' },
              { kind: 'writeoff', percent: 150 },
              { kind: 'writeoff', percent: 100 },
              { kind: 'jump', days: 6 },
              { kind: 'payout', mode: 'group', minimum: 1 },
            ],
            Date.UTC(2026, 0, 31, 12, 0),
          ],
        ],
      },
    );
    // The generated sequences must have reached every path the property is about.
    const reached = async (where: object) => app.db.rewardEvent.count({ where: { issuerId: issuer.id, ...where } });
    assert.ok((await reached({ type: 'branded_spent' })) > 0, 'no sequence spent branded balance');
    assert.ok((await reached({ type: 'branded_expired' })) > 0, 'no sequence expired a grant');
    assert.ok((await reached({ type: 'branded_clawed_back' })) > 0, 'no sequence clawed back branded balance');
    assert.ok(
      (await reached({ coversBrandedShortfall: true })) > 0,
      'no sequence clawed a spent grant back from cashback',
    );
    assert.ok(mismatches.refused > 0, 'no sequence sent a refund in another currency');
    assert.ok(mismatches.stored > 0, 'no sequence processed a stored refund in another currency');
    for (const type of ['cashback_adjusted', 'branded_adjusted']) {
      assert.ok((await reached({ type, amountMinor: { gt: 0 } })) > 0, `no sequence credited by ${type}`);
      assert.ok((await reached({ type, amountMinor: { lt: 0 } })) > 0, `no sequence debited by ${type}`);
    }
    assert.ok(adjusted.refusedCashback > 0, 'no sequence debited cashback beyond the balance');
    assert.ok(adjusted.refusedBranded > 0, 'no sequence debited branded balance beyond the balance');
    assert.ok(adjusted.drainedToZero > 0, 'no sequence debited a whole balance');
    assert.ok(adjusted.notYetDrawn > 0, 'no branded debit drew a grant not yet available');
    assert.ok(adjusted.replayed > 0, 'no sequence replayed an adjustment key');
    assert.ok(paidOut.groups > 0, 'no sequence paid cashback out');
    assert.ok(paidOut.writtenOff > 0, 'no sequence wrote off what a group owed');
    assert.ok((await reached({ type: 'cashback_owed_repaid' })) > 0, 'no sequence repaid owed cashback');
    const owedClawbacks = await app.db.ledgerTransfer.count({
      where: { issuerId: issuer.id, kind: 'clawback_cashback_owed' },
    });
    assert.ok(owedClawbacks > 0, 'no sequence refunded cashback that was paid out');
    const kinds = async (kind: string) => app.db.ledgerTransfer.count({ where: { issuerId: issuer.id, kind } });
    for (const kind of ['issuer_share_cashback', 'issuer_share_branded', 'issuer_share_returned'])
      assert.ok((await kinds(kind)) > 0, `no sequence posted ${kind}`);
    for (const kind of ['commission_charged', 'commission_returned', 'merchant_payment'])
      assert.ok((await kinds(kind)) > 0, `no sequence posted ${kind}`);
    const budgets = await app.db.offerBudget.findMany({ where: { offerId: fundedOfferId } });
    assert.ok(budgets.length > 1, 'no sequence crossed into a new month of the budget');
    assert.ok(billed.budgetSpent > 0, 'no sequence spent a month of the budget to the minor unit');
    const exhausted = await app.db.ingestedEvent.count({
      where: {
        issuerId: issuer.id,
        matchTrace: { path: ['earn', 'reasons'], array_contains: ['offer_budget_exhausted'] },
      },
    });
    assert.ok(exhausted > 0, 'no purchase was refused for a spent budget');
    assert.ok(billed.statements > 0, 'no sequence issued a statement');
    assert.ok(billed.stragglers > 0, 'no sequence posted in a month after billing it (the next statement takes it)');
    assert.ok(billed.paidInFull > 0, 'no statement was paid in full');
  });

  const mismatches = { refused: 0, stored: 0 };
  const billed = { statements: 0, stragglers: 0, paidInFull: 0, budgetSpent: 0, months: new Set<string>() };

  /** Bills the issuer's merchants for the month of the step: what a statement run does for them. */
  async function bill(atMs: number): Promise<void> {
    const period = periodOf(new Date(atMs));
    billed.months.add(period);
    const runId = newId('stmrun');
    await app.db.statementRun.create({
      data: { id: runId, period, status: 'processing', idempotencyKey: runId, requestHash: runId, actor: 'property' },
    });
    for (let after: string | null = ''; after !== null;) {
      const chunk = await sqlTransaction(app.db, (tx) =>
        billChunk(tx, { runId, period, afterAccountId: after!, limit: 1, at: new Date(atMs), issuerId: issuer.id }),
      );
      billed.statements += chunk.statements.length;
      after = chunk.nextAfterAccountId;
    }
    await app.db.statementRun.update({
      where: { id: runId },
      data: { status: 'completed', completedAt: new Date(atMs) },
    });
  }

  /** Pays a share of what one of the issuer's statements still has due; nothing when none has any. */
  async function payStatementShare(step: Extract<Step, { kind: 'pay' }>, key: string): Promise<void> {
    const due = (await app.db.statement.findMany({ where: { issuerId: issuer.id }, orderBy: { id: 'asc' } })).filter(
      (s) => s.totalDueMinor > s.paidMinor,
    );
    if (due.length === 0) return;
    const statement = due[step.statement % due.length];
    const outstanding = fromDbMinor(statement.totalDueMinor) - fromDbMinor(statement.paidMinor);
    const amountMinor = Math.max(1, Math.floor((outstanding * step.percent) / 100));
    // Paid now, in real time: the operator audit log, which every test shares, orders by it; a
    // payment's date is not part of any statement.
    const { statement: after } = await payStatement(
      app.db,
      { actor: 'property', idempotencyKey: key, at: new Date() },
      statement.id,
      { amountMinor, reference: key },
    );
    assert.equal(after.status, amountMinor === outstanding ? 'paid' : 'issued');
    if (after.status === 'paid') billed.paidInFull++;
  }

  /**
   * No month of the funded offer's budget gave more than its limit, and the merchants' receivables
   * are exactly their statements: those issued, plus what each would get if billed now (for a
   * period after every posting), less what was paid; each transfer on the receivables (payments
   * aside) counted on exactly one of them.
   */
  async function checkBudgetsAndStatements(): Promise<void> {
    for (const b of await app.db.offerBudget.findMany({ where: { offerId: fundedOfferId } })) {
      assert.ok(fromDbMinor(b.usedMinor) <= FUNDED_BUDGET, `the budget of ${b.period} gave ${b.usedMinor}`);
      if (fromDbMinor(b.usedMinor) === FUNDED_BUDGET) billed.budgetSpent++;
    }
    const issued = await app.db.statement.findMany({ where: { issuerId: issuer.id } });
    const pending: BilledStatement[] = [];
    await sqlTransaction(app.db, async (tx) => {
      for (let after: string | null = ''; after !== null;) {
        const chunk = await previewChunk(tx, {
          runId: 'preview',
          period: '9999-12',
          afterAccountId: after,
          at: new Date(),
          issuerId: issuer.id,
        });
        pending.push(...chunk.statements);
        after = chunk.nextAfterAccountId;
      }
    });
    const receivables = await app.db.ledgerAccount.findMany({
      where: { issuerId: issuer.id, kind: 'merchant_receivable' },
    });
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
    assert.equal(
      sum(issued.map((s) => fromDbMinor(s.totalDueMinor) - fromDbMinor(s.paidMinor))) +
        sum(pending.map((s) => s.totalDueMinor)),
      sum(receivables.map((a) => fromDbMinor(a.balanceMinor))),
      'statements, billed and to bill, less payments, are the receivables',
    );
    const entries = await app.db.$queryRaw<Array<{ n: bigint }>>`
      SELECT count(*) AS n FROM ledger_entry e JOIN ledger_transfer t ON t.id = e.transfer_id
       WHERE e.account_id = ANY(${receivables.map((a) => a.id)}::text[]) AND t.kind <> 'merchant_payment'`;
    assert.equal(
      sum(issued.map((s) => s.transferCount)) + sum(pending.map((s) => s.transferCount)),
      Number(entries[0].n),
      'every transfer on exactly one statement',
    );
  }
  const paidOut = { groups: 0, writtenOff: 0 };
  const adjusted = { refusedCashback: 0, refusedBranded: 0, drainedToZero: 0, notYetDrawn: 0, replayed: 0 };

  /** An adjustment posted, with what was asked: a replay sends the same key and request. */
  interface Posted {
    key: string;
    request: AdjustmentRequest;
    adjustment: Adjustment;
  }

  function post(chgId: string, key: string, request: AdjustmentRequest, atMs: number) {
    return inTransaction(app.db, (tx) =>
      postAdjustment(tx, {
        ...request,
        issuerId: issuer.id,
        chgId,
        actor: 'tok_property',
        idempotencyKey: key,
        at: new Date(atMs),
        recordedAt: new Date(),
      }),
    );
  }

  /**
   * Posts a credit, or a debit of a share of what the group can be debited: its cashback, or
   * its unexpired branded grants (spendable yet or not). A debit beyond that must be refused
   * with insufficient_balance and write nothing; one within it must post.
   */
  async function adjust(
    step: Extract<Step, { kind: 'adjust' }>,
    chgId: string,
    key: string,
    atMs: number,
  ): Promise<Posted | null> {
    const cashback = step.balanceType === 'cashback';
    const before = await footprint(chgId, atMs);
    // Branded: the unexpired grants at the adjusted merchant (the group may hold some at the funded one too).
    const debitable = cashback ? before.summary.cashback.balanceMinor : await brandedAt(chgId, merchantId, atMs);
    const magnitude =
      step.direction === 'credit' ? step.amount : Math.max(1, Math.floor((debitable * step.percent) / 100));
    const request: AdjustmentRequest = {
      balanceType: step.balanceType,
      amountMinor: step.direction === 'credit' ? magnitude : -magnitude,
      reasonCode: step.reasonCode,
      ...(cashback ? {} : { merchantId }),
    };
    if (step.direction === 'debit' && magnitude > debitable) {
      await assert.rejects(post(chgId, key, request, atMs), (err: unknown) => {
        assert.ok(err instanceof ApiError, String(err));
        assert.equal(err.status, 409);
        assert.equal(err.reasonCode, 'insufficient_balance');
        assert.equal(err.details?.availableMinor, debitable);
        return true;
      });
      assert.deepEqual(await footprint(chgId, atMs), before, 'a refused debit posts nothing');
      if (cashback) adjusted.refusedCashback++;
      else adjusted.refusedBranded++;
      return null;
    }
    const { adjustment, created } = await post(chgId, key, request, atMs);
    assert.equal(created, true);
    assert.equal(adjustment.amountMinor, request.amountMinor);
    const event = await app.db.rewardEvent.findUniqueOrThrow({ where: { id: adjustment.rewardEventId } });
    assert.equal(fromDbMinor(event.amountMinor), request.amountMinor, 'the reward event is signed');
    if (step.direction === 'debit' && magnitude === debitable) adjusted.drainedToZero++;
    if (!cashback && step.direction === 'debit') await checkSoonestExpiringFirst(chgId, adjustment, atMs);
    return { key, request, adjustment };
  }

  /** What a group's unexpired grants at one merchant hold, spendable yet or not. */
  async function brandedAt(chgId: string, merchant: string, atMs: number): Promise<number> {
    const grants = await app.db.rewardGrant.aggregate({
      where: { issuerId: issuer.id, chgId, merchantId: merchant, expiresAt: { gt: new Date(atMs) } },
      _sum: { remainingMinor: true },
    });
    return fromDbMinor(grants._sum.remainingMinor ?? 0n);
  }

  /** The same key and request again, later: the first adjustment back, nothing posted. */
  async function replayAdjustment(previous: Posted, chgId: string, atMs: number): Promise<void> {
    const before = await footprint(chgId, atMs);
    const { adjustment, created } = await post(chgId, previous.key, previous.request, atMs);
    assert.equal(created, false);
    assert.deepEqual(adjustment, previous.adjustment);
    assert.deepEqual(await footprint(chgId, atMs), before, 'a replay posts nothing');
    adjusted.replayed++;
  }

  /** A branded debit left no value in an unexpired grant expiring before one it drew from. */
  async function checkSoonestExpiringFirst(chgId: string, adjustment: Adjustment, atMs: number): Promise<void> {
    const draws = await app.db.rewardGrantDraw.findMany({ where: { transferId: adjustment.transferId } });
    const drawn = await app.db.rewardGrant.findMany({ where: { id: { in: draws.map((d) => d.grantId) } } });
    assert.ok(drawn.length > 0);
    const latest = new Date(Math.max(...drawn.map((g) => g.expiresAt.getTime())));
    const skipped = await app.db.rewardGrant.count({
      where: {
        issuerId: issuer.id,
        chgId,
        remainingMinor: { gt: 0 },
        expiresAt: { gt: new Date(atMs), lt: latest },
      },
    });
    assert.equal(skipped, 0, 'a branded debit draws the soonest-expiring grants first');
    if (drawn.some((g) => g.availableAt.getTime() > atMs)) adjusted.notYetDrawn++;
  }

  /** What a posting would change: the summary, the group's ledger and the issuer's rows. */
  async function footprint(chgId: string, atMs: number) {
    const where = { issuerId: issuer.id };
    return {
      summary: (await rewardsSummary(app.db, issuer.id, chgId, new Date(atMs)))!,
      accounts: await app.db.ledgerAccount.findMany({
        where,
        select: { id: true, balanceMinor: true },
        orderBy: { id: 'asc' },
      }),
      grants: await app.db.rewardGrant.findMany({
        where: { ...where, chgId },
        select: { id: true, remainingMinor: true },
        orderBy: { id: 'asc' },
      }),
      transfers: await app.db.ledgerTransfer.count({ where }),
      events: await app.db.rewardEvent.count({ where }),
      adjustments: await app.db.adjustment.count({ where }),
    };
  }

  /** A refund in another currency than its purchase: refused alone, nothing stored. */
  async function refuseMismatch(refund: Record<string, unknown>): Promise<void> {
    const res = await issuer.call('POST', '/api/v1/incoming-txn', refund);
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body[0].error.reasonCode, 'currency_mismatch');
    const stored = await app.db.ingestedEvent.count({
      where: { issuerId: issuer.id, externalId: refund.id as string },
    });
    assert.equal(stored, 0);
    mismatches.refused++;
  }

  /**
   * A refund stored and clawed back; `otherCurrency` makes it one stored before ingestion refused the
   * mismatch. True when it counts against its purchase (same currency).
   */
  async function refundStored(refund: Record<string, unknown>, otherCurrency: boolean, atMs: number): Promise<boolean> {
    const eventId = await ingest(refund);
    if (otherCurrency) await app.db.ingestedEvent.update({ where: { id: eventId }, data: { currency: 'jpy' } });
    await clawBackRefund(
      { db: app.db, logger: createLogger('silent'), clock: { now: () => new Date() } },
      { eventId, atMs },
    );
    if (!otherCurrency) return true;
    const clawed = await app.db.rewardEvent.count({ where: { sourceEventId: eventId } });
    assert.equal(clawed, 0, 'a refund in another currency claws back nothing');
    const row = await app.db.ingestedEvent.findUniqueOrThrow({ where: { id: eventId } });
    assert.equal(row.rewardStatus, 'not_matched');
    mismatches.stored++;
    return false;
  }

  /**
   * Pays the group's payable cashback out: a single group's payout, or a run limited to the group
   * (its activities, chunk by chunk, then completed). Never more than was payable, never any of
   * what is on hold; a group with nothing payable (or less than the run's minimum) is not paid.
   */
  async function payOut(step: Extract<Step, { kind: 'payout' }>, chgId: string, key: string, atMs: number) {
    const before = (await rewardsSummary(app.db, issuer.id, chgId, new Date(atMs)))!.cashback;
    const at = new Date(atMs);
    let paid = 0;
    if (step.mode === 'group') {
      const caller = { issuerId: issuer.id, idempotencyKey: key, at };
      if (before.payableMinor === 0) {
        await assert.rejects(payGroupNow(app.db, caller, chgId, {}), /no payable cashback/);
      } else paid = fromDbMinor((await payGroupNow(app.db, caller, chgId, {})).payout.totalMinor);
    } else {
      const payoutId = newId('po');
      await app.db.payout.create({
        data: {
          ...{ id: payoutId, issuerId: issuer.id, kind: 'run', status: 'processing', idempotencyKey: key },
          ...{ requestHash: key, minimumMinor: BigInt(step.minimum), chgIds: [chgId], asOf: at, createdAt: at },
        },
      });
      const activities = createPayoutActivities({ db: app.db, clock: { now: () => at } });
      for (let after: string | null = ''; after !== null;) {
        const chunk = await activities.payOutChunk({ payoutId, afterAccountId: after, chunkSize: 1 });
        // A retried chunk pays nobody twice.
        assert.equal((await activities.payOutChunk({ payoutId, afterAccountId: after, chunkSize: 1 })).groupsPaid, 0);
        after = chunk.nextAfterAccountId;
      }
      paid = (await activities.completePayout({ payoutId })).totalMinor;
      assert.equal(paid, before.payableMinor >= step.minimum ? before.payableMinor : 0);
    }
    const after = (await rewardsSummary(app.db, issuer.id, chgId, new Date(atMs)))!.cashback;
    assert.ok(paid <= before.payableMinor, 'never more than is payable');
    assert.equal(after.onHoldMinor, before.onHoldMinor, 'nothing on hold is paid out');
    assert.equal(after.paidOutMinor, before.paidOutMinor + paid);
    if (paid > 0) paidOut.groups++;
  }

  /** Forgives a share of what the group owes; more than it owes is refused and posts nothing. */
  async function writeOff(step: Extract<Step, { kind: 'writeoff' }>, chgId: string, key: string, atMs: number) {
    const before = await footprint(chgId, atMs);
    const owed = before.summary.cashback.owedMinor;
    if (owed === 0) return;
    const amountMinor = Math.max(1, Math.floor((owed * step.percent) / 100));
    const request: AdjustmentRequest = { balanceType: 'cashback', amountMinor, reasonCode: 'write_off' };
    if (amountMinor > owed) {
      await assert.rejects(post(chgId, key, request, atMs), (err: unknown) => {
        assert.ok(err instanceof ApiError && err.status === 409 && err.reasonCode === 'insufficient_balance');
        return true;
      });
      assert.deepEqual(await footprint(chgId, atMs), before, 'a refused write-off posts nothing');
      return;
    }
    await post(chgId, key, request, atMs);
    const after = (await rewardsSummary(app.db, issuer.id, chgId, new Date(atMs)))!.cashback;
    assert.equal(after.owedMinor, owed - amountMinor);
    assert.equal(after.balanceMinor, before.summary.cashback.balanceMinor, 'a write-off pays nothing to the balance');
    paidOut.writtenOff++;
  }

  /**
   * The double-dip invariant: what the group keeps of each purchase (earned, less what refunds took
   * back, owed included) is what the rules give net of its refunds, and its whole position (balance,
   * paid out, less owed, and its branded balance however used) is that plus its adjustments.
   */
  async function checkKeptByTheRules(
    chgId: string,
    purchases: Array<{ externalId: string; amount: number; refunded: number }>,
    atMs: number,
  ): Promise<void> {
    let rules = 0;
    for (const p of purchases) {
      const txn = await app.db.ingestedEvent.findUniqueOrThrow({
        where: { issuerId_kind_externalId: { issuerId: issuer.id, kind: 'settled', externalId: p.externalId } },
      });
      const earned = await app.db.rewardEvent.groupBy({
        by: ['type'],
        where: { transactionId: txn.id, type: { in: ['cashback_earned', 'branded_earned'] } },
        _sum: { amountMinor: true },
      });
      const refunded = Math.min(p.amount, p.refunded);
      for (const e of earned) {
        const amount = fromDbMinor(e._sum.amountMinor ?? 0n);
        rules += amount - Math.floor((amount * refunded) / p.amount);
      }
    }
    const { cashback: c, brandedBalance: b } = (await rewardsSummary(app.db, issuer.id, chgId, new Date(atMs)))!;
    assert.equal(
      c.earnedMinor - c.clawedBackMinor + b.earnedMinor - b.clawedBackMinor,
      rules,
      'kept as the rules give',
    );
    const position =
      c.balanceMinor +
      c.paidOutMinor -
      c.owedMinor +
      b.availableMinor +
      b.notYetAvailableMinor +
      b.spentMinor +
      b.expiredMinor;
    assert.equal(position, rules + c.adjustedMinor + b.adjustedMinor, 'the group holds, was paid or owes nothing else');
  }

  /**
   * Files a claim about the purchase at the unfunded merchant, as the claim's workflow decides it
   * (its activities, on a row written as the API writes it), then the operator's decision when it
   * goes to review. An approval the purchase's refunds since made impossible is refused.
   */
  async function claim(step: Extract<Step, { kind: 'claim' }>, chgId: string, externalId: string, atMs: number) {
    const txn = await app.db.ingestedEvent.findUniqueOrThrow({
      where: { issuerId_kind_externalId: { issuerId: issuer.id, kind: 'settled', externalId } },
    });
    const id = newId('clm');
    await app.db.claim.create({
      data: {
        id,
        issuerId: issuer.id,
        chgId,
        transactionId: txn.id,
        reason: 'missing_reward',
        merchantId,
        workflowId: `claim/${issuer.id}/${id}`,
        createdAt: new Date(atMs),
        updatedAt: new Date(atMs),
      },
    });
    const claims = createClaimActivities({ db: app.db, clock: { now: () => new Date(atMs) } });
    const decided = await claims.decideClaim({ claimId: id });
    if (decided.status !== 'needs_review') return;
    const operator = step.approve
      ? { decision: 'approve' as const, actor: 'operator:property' }
      : { decision: 'reject' as const, actor: 'operator:property', reasonCode: 'other' };
    try {
      const resolved = await claims.resolveClaim({ claimId: id, operator });
      assert.equal(resolved.status, step.approve ? 'approved' : 'rejected');
    } catch (err) {
      // Refunded in full since the review: nothing posted, the claim still in review.
      const failure = err as { details?: Array<{ reasonCode?: string }> };
      assert.equal(failure.details?.[0]?.reasonCode, 'purchase_refunded', String(err));
      await claims.resolveClaim({
        claimId: id,
        operator: { decision: 'reject', actor: 'operator:property', reasonCode: 'other' },
      });
    }
  }

  /**
   * What approved claims credited to each purchase, net of what its refunds took back, is each
   * credit less its share of the part of the purchase refunded since it was posted: a claim's
   * credit is never kept for a returned purchase, and never taken back beyond itself.
   */
  async function checkClaimCredits(purchases: Array<{ externalId: string; amount: number; refunded: number }>) {
    for (const p of purchases) {
      const txn = await app.db.ingestedEvent.findUniqueOrThrow({
        where: { issuerId_kind_externalId: { issuerId: issuer.id, kind: 'settled', externalId: p.externalId } },
      });
      const credits = await app.db.adjustment.findMany({
        where: { transactionId: txn.id, claimId: { not: null }, purchaseRefundedMinor: { not: null } },
      });
      if (credits.length === 0) continue;
      const expected = credits.reduce((sum, c) => {
        const credit = {
          amountMinor: fromDbMinor(c.amountMinor),
          purchaseRefundedMinor: fromDbMinor(c.purchaseRefundedMinor!),
        };
        return (
          sum +
          credit.amountMinor -
          claimCreditClawedBack(credit, { purchaseAmountMinor: p.amount, refundedMinor: p.refunded })
        );
      }, 0);
      const reversals = await app.db.rewardEvent.aggregate({
        where: {
          transactionId: txn.id,
          type: { in: ['cashback_adjusted', 'branded_adjusted'] },
          sourceEventId: { not: null },
        },
        _sum: { amountMinor: true },
      });
      const credited = credits.reduce((sum, c) => sum + fromDbMinor(c.amountMinor), 0);
      assert.equal(credited + fromDbMinor(reversals._sum.amountMinor ?? 0n), expected, `claim credits of ${txn.id}`);
    }
  }

  async function ingest(event: Record<string, unknown>): Promise<string> {
    const res = await issuer.call('POST', '/api/v1/incoming-txn', event);
    assert.equal(res.status, 204, res.text);
    const row = await app.db.ingestedEvent.findUniqueOrThrow({
      where: { issuerId_kind_externalId: { issuerId: issuer.id, kind: 'settled', externalId: event.id as string } },
    });
    return row.id;
  }

  async function checkLedgerAgrees(chgId: string, atMs: number): Promise<void> {
    await assertLedgerHealthy(app.db, issuer.id);
    const summary = (await rewardsSummary(app.db, issuer.id, chgId, new Date(atMs)))!;
    const ledger = await ledgerSums(chgId);
    const c = summary.cashback;
    const b = summary.brandedBalance;
    for (const [name, value] of Object.entries({ ...c, ...b })) {
      assert.ok(Number.isSafeInteger(value), `${name} = ${value}`);
      // Only the net of adjustments is signed.
      if (name !== 'adjustedMinor') assert.ok(value >= 0, `${name} = ${value}`);
    }
    assert.equal(c.balanceMinor, ledger.cashbackBalance, 'cashback balance is the chg_cashback account');
    assert.equal(c.owedMinor, ledger.owedBalance, 'owed is the chg_cashback_owed account');
    assert.equal(c.earnedMinor, ledger.byKind('earn_cashback'));
    assert.equal(c.clawedBackMinor, ledger.byKind('clawback_cashback') + ledger.byKind('clawback_cashback_owed'));
    assert.equal(c.paidOutMinor, ledger.byKind('payout_cashback'));
    assert.equal(
      c.adjustedMinor,
      ledger.byKind('adjust_credit_cashback') -
        ledger.byKind('adjust_debit_cashback') -
        ledger.byKind('adjust_debit_cashback_owed') +
        ledger.byKind('write_off_cashback_owed'),
      'cashback adjusted is the net of the cashback adjustment transfers, write-offs and claim reversals included',
    );
    assert.equal(c.earnedMinor - c.clawedBackMinor + c.adjustedMinor - c.paidOutMinor, c.balanceMinor - c.owedMinor);
    assert.equal(c.onHoldMinor + c.payableMinor, c.balanceMinor);
    const held = await app.db.cashbackHold.aggregate({
      where: { issuerId: issuer.id, chgId, payableAt: { gt: new Date(atMs) } },
      _sum: { remainingMinor: true },
    });
    assert.equal(c.onHoldMinor, Math.min(c.balanceMinor, fromDbMinor(held._sum.remainingMinor ?? 0n)));
    assert.equal(b.earnedMinor, ledger.byKind('earn_branded'));
    assert.equal(
      b.adjustedMinor,
      ledger.byKind('adjust_credit_branded') - ledger.byKind('adjust_debit_branded'),
      'branded adjusted is the net of the branded adjustment transfers',
    );
    assert.equal(b.spentMinor, ledger.byKind('spend_branded'));
    assert.equal(b.clawedBackMinor, ledger.byKind('clawback_branded'));
    // Value past expiry not yet moved to breakage is reported as expired, and is still in the account.
    const awaitingExpiry = b.expiredMinor - ledger.byKind('expire_branded');
    assert.ok(awaitingExpiry >= 0);
    assert.equal(
      b.availableMinor + b.notYetAvailableMinor + awaitingExpiry,
      ledger.brandedBalance,
      'branded buckets are the chg_branded accounts',
    );
    assert.equal(
      b.spentMinor + b.expiredMinor + b.clawedBackMinor + b.availableMinor + b.notYetAvailableMinor,
      b.earnedMinor + b.adjustedMinor,
    );
  }

  async function ledgerSums(chgId: string) {
    const accounts = await app.db.ledgerAccount.findMany({ where: { issuerId: issuer.id, chgId } });
    const ids = accounts.map((a) => a.id);
    const transfers = await app.db.ledgerTransfer.groupBy({
      by: ['kind'],
      where: { issuerId: issuer.id, OR: [{ debitAccountId: { in: ids } }, { creditAccountId: { in: ids } }] },
      _sum: { amountMinor: true },
    });
    const kinds = new Map(transfers.map((t) => [t.kind, fromDbMinor(t._sum.amountMinor ?? 0n)]));
    const balanceOf = (kind: string) =>
      accounts.filter((a) => a.kind === kind).reduce((s, a) => s + fromDbMinor(a.balanceMinor), 0);
    return {
      byKind: (kind: string) => kinds.get(kind) ?? 0,
      cashbackBalance: balanceOf('chg_cashback'),
      owedBalance: balanceOf('chg_cashback_owed'),
      brandedBalance: balanceOf('chg_branded'),
    };
  }
});
