// Each invariant of ledgerInvariants (and so of assertLedgerHealthy, which every money
// scenario ends with) fires on a ledger broken in just its way, and only that one fires.
// Each case builds a healthy ledger, breaks it with raw SQL inside a transaction that is
// rolled back (constraints and immutability triggers that would refuse the break are dropped
// inside that transaction only), and reads the violations before the rollback.
import assert from 'node:assert/strict';
import { createDb, type Db } from '../../../../prisma/client';
import { testDatabaseUrl } from '../../../helpers/env';
import { at, chgId, key, ledgerIssuer, merchantId, plusDays } from '../../../helpers/ledger';
import { earnBranded, ledgerInvariants, postTransfer, spendBranded, type Tx } from '../../../../core/domain/ledger';
import { newId } from '../../../../core/ids';

const ROLLBACK = new Error('rollback');

describe('ledger invariants fire on a broken ledger', () => {
  let db: Db;
  before(() => (db = createDb(testDatabaseUrl(), 5)));
  after(() => db.$disconnect());

  /** A healthy ledger (cashback earned, branded earned and partly spent), broken by `breakIt`. */
  async function violationsAfter(
    breakIt: (
      tx: Tx,
      ids: { issuerId: string; cashbackTransferId: string; grantId: string; branded: string; cashback: string },
    ) => Promise<void>,
  ) {
    const issuerId = await ledgerIssuer(db);
    const base = { issuerId, chgId: chgId(), merchantId: merchantId(), at: at() };
    let found: string[] = [];
    await assert.rejects(
      db.$transaction(
        async (tx) => {
          const cashback = await postTransfer(tx, {
            ...base,
            kind: 'earn_cashback',
            amountMinor: 500,
            idempotencyKey: key(),
          });
          const { grant } = await earnBranded(tx, {
            ...base,
            amountMinor: 300,
            idempotencyKey: key(),
            availableAt: base.at,
            expiresAt: plusDays(base.at, 30),
          });
          await spendBranded(tx, { ...base, maxAmountMinor: 100, idempotencyKey: key(), at: plusDays(base.at, 1) });
          assert.deepEqual(await ledgerInvariants(tx, { issuerId }), [], 'healthy before the break');
          await breakIt(tx, {
            issuerId,
            cashbackTransferId: cashback.transfer.id,
            grantId: grant.id,
            branded: grant.accountId,
            cashback: cashback.transfer.creditAccountId,
          });
          found = [...new Set((await ledgerInvariants(tx, { issuerId })).map((v) => v.invariant))];
          throw ROLLBACK;
        },
        { timeout: 30_000 },
      ),
      (e) => e === ROLLBACK,
    );
    return found;
  }

  const unlock = (
    tx: Tx,
    table: 'ledger_entry' | 'ledger_transfer' | 'reward_grant' | 'ledger_account',
    what: string,
  ) =>
    tx.$executeRawUnsafe(
      table === 'ledger_entry' || table === 'ledger_transfer'
        ? `ALTER TABLE ${table} DISABLE TRIGGER USER`
        : `ALTER TABLE ${table} DROP CONSTRAINT ${what}`,
    );

  /** Makes every account's cached balance agree with its entries again, so only the planted break shows. */
  const rebuildCaches = (tx: Tx) => tx.$executeRaw`
    UPDATE ledger_account a SET balance_minor = CASE a.normal_side WHEN 'debit' THEN s.total ELSE -s.total END
      FROM (SELECT account_id, SUM(amount_minor) AS total FROM ledger_entry GROUP BY account_id) s WHERE s.account_id = a.id`;

  it('a transfer whose entries do not match it', async () => {
    const found = await violationsAfter(async (tx, { cashbackTransferId }) => {
      await unlock(tx, 'ledger_entry', '');
      // Both entries move by one: they still sum to 0, only their match with the transfer breaks.
      await tx.$executeRaw`UPDATE ledger_entry SET amount_minor = amount_minor + CASE WHEN amount_minor > 0 THEN 1 ELSE -1 END WHERE transfer_id = ${cashbackTransferId}`;
      await rebuildCaches(tx);
    });
    assert.deepEqual(found, ['transfer has exactly two entries that sum to zero and match its accounts and amount']);
  });

  it('entries that do not sum to zero', async () => {
    const found = await violationsAfter(async (tx, { cashbackTransferId, cashback }) => {
      await unlock(tx, 'ledger_entry', '');
      await tx.$executeRaw`DELETE FROM ledger_entry WHERE transfer_id = ${cashbackTransferId} AND account_id <> ${cashback}`;
      await rebuildCaches(tx);
    });
    assert.deepEqual(found, [
      'transfer has exactly two entries that sum to zero and match its accounts and amount',
      'all entries sum to zero',
    ]);
  });

  it('a cached balance that differs from its entries', async () => {
    const found = await violationsAfter(async (tx, { cashback }) => {
      await tx.$executeRaw`UPDATE ledger_account SET balance_minor = balance_minor + 1 WHERE id = ${cashback}`;
    });
    assert.deepEqual(found, ['cached account balance equals the sum of its entries']);
  });

  it('a negative liability', async () => {
    const found = await violationsAfter(async (tx, { cashbackTransferId }) => {
      await unlock(tx, 'ledger_account', 'ledger_account_liability_nonnegative_check');
      await unlock(tx, 'ledger_entry', '');
      // Both entries of the cashback earn flipped: balanced, caches rebuilt, the group's cashback negative.
      await tx.$executeRaw`UPDATE ledger_entry SET amount_minor = -amount_minor WHERE transfer_id = ${cashbackTransferId}`;
      await rebuildCaches(tx);
    });
    assert.ok(found.includes('liability account is not negative'), JSON.stringify(found));
    assert.ok(!found.includes('cached account balance equals the sum of its entries'), JSON.stringify(found));
  });

  it('a grant whose remaining value disagrees with its draws', async () => {
    const found = await violationsAfter(async (tx, { grantId }) => {
      // Its amount grows by one while remaining and the draws stay: remaining <> amount − draws.
      await tx.$executeRaw`UPDATE reward_grant SET amount_minor = amount_minor + 1 WHERE id = ${grantId}`;
    });
    assert.deepEqual(found, ['grant remaining is within 0..amount and equals amount minus its draws']);
  });

  it('an offer budget that disagrees with what its purchases kept', async () => {
    const found = await violationsAfter(async (tx) => {
      const merchant = await tx.merchant.create({ data: { id: merchantId(), name: 'budgeted', category: 'dining' } });
      const offer = await tx.offer.create({
        data: {
          id: newId('ofr'),
          merchantId: merchant.id,
          title: 'budgeted',
          cashbackRateBps: 100,
          brandedRateBps: 0,
          startsAt: at(),
          budgetMinor: 1000n,
        },
      });
      // Used without any purchase having drawn on it.
      await tx.offerBudget.create({ data: { offerId: offer.id, period: '', usedMinor: 5n } });
    });
    assert.deepEqual(found, ['offer budget used equals what its purchases kept']);
  });
});
