// Property: whatever sequence of purchases, refunds, time jumps and expiry runs a group goes
// through, the ledger stays healthy and the rewards summary is exactly what the ledger says.
// Some purchases are in euros (they earn nothing) and some refunds in yen: ingestion refuses a
// refund in another currency than its purchase, and one stored before that rule (made here by
// changing a stored refund's currency) claws back nothing.
// Events are ingested over HTTP (stored, not handed to Temporal); the real settlement, refund
// and expiry activities then run directly with a controlled clock (`atMs`), for speed.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startTestApp, newIssuer, type TestApp, type TestIssuer } from '../../helpers/app';
import { createMerchant, createOffer, daysFromNow } from '../../helpers/catalogue';
import { settledEvent, cardOf } from '../../helpers/events';
import { groupBody } from '../../helpers/groups';
import { assertLedgerHealthy } from '../../helpers/ledger';
import { createLogger } from '../../../core/logger';
import { settleTransaction } from '../../../activities/lifecycle/settle';
import { clawBackRefund } from '../../../activities/lifecycle/refund';
import { expireDueGrants } from '../../../activities/expiry';
import { rewardsSummary } from '../../../api/balances/summary';
import { fromDbMinor } from '../../../core/ledger';
import type { LifecycleDeps } from '../../../activities/lifecycle/deps';

const DAY_MS = 86_400_000;

type RefundCurrency = 'same' | 'jpy' | 'stored_jpy';

type Step =
  | { kind: 'purchase'; amount: number; currency: 'usd' | 'eur' }
  | { kind: 'refund'; purchase: number; percent: number; currency: RefundCurrency }
  | { kind: 'jump'; days: number }
  | { kind: 'expire' };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('purchase' as const),
      amount: fc.integer({ min: 1, max: 20_000 }),
      currency: fc.constantFrom('usd', 'usd', 'usd', 'usd', 'eur'),
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
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('jump' as const), days: fc.integer({ min: 1, max: 8 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'expire' as const }) },
);

describe('branded balance under random purchases, refunds, time jumps and expiry (property)', function () {
  this.timeout(300_000);
  let app: TestApp;
  let issuer: TestIssuer;
  let merchantId: string;
  before(async () => {
    app = await startTestApp();
    issuer = await newIssuer(app);
    // Short delays and expiry so a sequence crosses both; a spend minimum so some purchases cannot spend.
    const merchant = await createMerchant(app, {
      brandedBalance: { enabled: true, spendMinimumMinor: 300, availabilityDelayDays: 2, expiryDays: 12 },
    });
    merchantId = merchant.id;
    await createOffer(app, merchantId, { cashbackRateBps: 300, brandedRateBps: 1000, startsAt: daysFromNow(-10) });
  });
  after(() => app.close());

  it('keeps the ledger healthy, no balance negative, and the summary equal to the ledger after every step', async () => {
    const deps: LifecycleDeps = { db: app.db, logger: createLogger('silent'), clock: { now: () => new Date() } };
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 20 }), async (steps) => {
        const group = (await issuer.call('POST', '/api/v2/chg', groupBody())).body;
        assert.equal(
          (await issuer.call('PUT', `/api/v2/chg/${group.id}/merchant/${merchantId}/activation`, {})).status,
          201,
        );
        const card = cardOf(group);
        let atMs = Date.now();
        const purchases: { externalId: string; amount: number; currency: string }[] = [];
        for (const step of steps) {
          if (step.kind === 'purchase') {
            const event = settledEvent(card, { amount: step.amount, currency: step.currency, merchantId });
            const eventId = await ingest(event);
            await settleTransaction(deps, { eventId, atMs });
            purchases.push({ externalId: event.id, amount: step.amount, currency: step.currency });
          } else if (step.kind === 'refund' && purchases.length > 0) {
            const purchase = purchases[step.purchase % purchases.length];
            const amount = Math.max(1, Math.floor((purchase.amount * step.percent) / 100));
            const refund = settledEvent(card, {
              state: 'refunded',
              amount,
              currency: step.currency === 'jpy' ? 'jpy' : purchase.currency,
              relatedTransactionId: purchase.externalId,
              merchantId,
            });
            if (step.currency === 'jpy') await refuseMismatch(refund);
            else await refundStored(refund, step.currency === 'stored_jpy', atMs);
          } else if (step.kind === 'jump') {
            atMs += step.days * DAY_MS;
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
          await checkLedgerAgrees(group.id, atMs);
        }
      }),
      { numRuns: 25, seed: 20261122, endOnFailure: true },
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
  });

  const mismatches = { refused: 0, stored: 0 };

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

  /** A refund stored and clawed back; `otherCurrency` makes it one stored before ingestion refused the mismatch. */
  async function refundStored(refund: Record<string, unknown>, otherCurrency: boolean, atMs: number): Promise<void> {
    const eventId = await ingest(refund);
    if (otherCurrency) await app.db.ingestedEvent.update({ where: { id: eventId }, data: { currency: 'jpy' } });
    await clawBackRefund(
      { db: app.db, logger: createLogger('silent'), clock: { now: () => new Date() } },
      { eventId, atMs },
    );
    if (!otherCurrency) return;
    const clawed = await app.db.rewardEvent.count({ where: { sourceEventId: eventId } });
    assert.equal(clawed, 0, 'a refund in another currency claws back nothing');
    const row = await app.db.ingestedEvent.findUniqueOrThrow({ where: { id: eventId } });
    assert.equal(row.rewardStatus, 'not_matched');
    mismatches.stored++;
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
    for (const [name, value] of Object.entries({ ...c, ...b }))
      assert.ok(Number.isSafeInteger(value) && value >= 0, `${name} = ${value}`);
    assert.equal(c.balanceMinor, ledger.cashbackBalance, 'cashback balance is the chg_cashback account');
    assert.equal(c.earnedMinor, ledger.byKind('earn_cashback'));
    assert.equal(c.clawedBackMinor, ledger.byKind('clawback_cashback'));
    assert.equal(c.earnedMinor - c.clawedBackMinor, c.balanceMinor);
    assert.equal(b.earnedMinor, ledger.byKind('earn_branded'));
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
      b.earnedMinor,
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
      brandedBalance: balanceOf('chg_branded'),
    };
  }
});
