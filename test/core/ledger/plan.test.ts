import assert from 'node:assert/strict';
import {
  ACCOUNT_KINDS,
  TRANSFER_KINDS,
  accounts,
  allocateDraw,
  balanceDelta,
  compareFifo,
  entriesOf,
  isLiability,
  normalSideOf,
  planTransfer,
  purchaseLockOrder,
  rewardEventTypeFor,
} from '../../../core/ledger';

const p = { issuerId: 'iss_1', chgId: 'chg_1', merchantId: 'mp_1' };

describe('core/ledger account plan', () => {
  it('builds deterministic per-issuer account ids', () => {
    assert.equal(accounts.merchantReceivable('iss_1', 'mp_1').id, 'iss_1:merchant_receivable:mp_1');
    assert.equal(accounts.chgCashback('iss_1', 'chg_1').id, 'iss_1:chg_cashback:chg_1');
    assert.equal(accounts.chgBranded('iss_1', 'chg_1', 'mp_1').id, 'iss_1:chg_branded:chg_1:mp_1');
    assert.equal(accounts.breakage('iss_1', 'mp_1').id, 'iss_1:breakage:mp_1');
    assert.equal(accounts.issuerFunding('iss_1').id, 'iss_1:issuer_funding');
    assert.equal(accounts.commission('iss_1', 'mp_1').id, 'iss_1:commission:mp_1');
    assert.equal(accounts.merchantCash('iss_1').id, 'iss_1:merchant_cash');
    assert.throws(() => accounts.chgCashback('iss_1', 'a:b'));
  });

  it('gives each account kind its normal side and marks the liabilities', () => {
    for (const k of [
      'merchant_receivable',
      'issuer_adjustments',
      'chg_cashback_owed',
      'issuer_funding',
      'merchant_cash',
    ] as const)
      assert.equal(normalSideOf(k), 'debit', k);
    for (const k of ['chg_cashback', 'chg_branded', 'breakage', 'issuer_payable', 'commission'] as const)
      assert.equal(normalSideOf(k), 'credit', k);
    assert.deepEqual(ACCOUNT_KINDS.filter(isLiability), ['chg_cashback', 'chg_branded']);
    assert.equal(balanceDelta('debit', 5), 5);
    assert.equal(balanceDelta('credit', 5), -5);
  });

  it('follows DESIGN.md for every transfer kind', () => {
    const table = Object.fromEntries(
      TRANSFER_KINDS.map((k) => {
        const plan = planTransfer(k, p);
        return [k, [plan.debit.kind, plan.credit.kind]];
      }),
    );
    assert.deepEqual(table, {
      earn_cashback: ['merchant_receivable', 'chg_cashback'],
      earn_branded: ['merchant_receivable', 'chg_branded'],
      spend_branded: ['chg_branded', 'merchant_receivable'],
      expire_branded: ['chg_branded', 'breakage'],
      clawback_cashback: ['chg_cashback', 'merchant_receivable'],
      clawback_branded: ['chg_branded', 'merchant_receivable'],
      // Customer service: the issuer funds credits, never a merchant.
      adjust_credit_cashback: ['issuer_adjustments', 'chg_cashback'],
      adjust_credit_branded: ['issuer_adjustments', 'chg_branded'],
      adjust_debit_cashback: ['chg_cashback', 'issuer_adjustments'],
      adjust_debit_branded: ['chg_branded', 'issuer_adjustments'],
      adjust_debit_cashback_owed: ['chg_cashback_owed', 'issuer_adjustments'],
      // Paid-out cashback: the issuer paid it; a refund after payout is owed, repaid, or written off.
      payout_cashback: ['chg_cashback', 'issuer_payable'],
      clawback_cashback_owed: ['chg_cashback_owed', 'merchant_receivable'],
      repay_cashback_owed: ['chg_cashback', 'chg_cashback_owed'],
      write_off_cashback_owed: ['issuer_adjustments', 'chg_cashback_owed'],
      // Funded offers: the issuer's share moves from the merchant to the issuer, and back on a
      // refund; commission is the programme's income, returned on a refund; a payment settles.
      issuer_share_cashback: ['issuer_funding', 'merchant_receivable'],
      issuer_share_branded: ['issuer_funding', 'merchant_receivable'],
      issuer_share_returned: ['merchant_receivable', 'issuer_funding'],
      commission_charged: ['merchant_receivable', 'commission'],
      commission_returned: ['commission', 'merchant_receivable'],
      merchant_payment: ['merchant_cash', 'merchant_receivable'],
    });
    for (const k of TRANSFER_KINDS) {
      const plan = planTransfer(k, p);
      for (const a of [plan.debit, plan.credit]) assert.equal(a.issuerId, 'iss_1');
    }
  });

  it('pairs each transfer kind with its reward event type', () => {
    assert.deepEqual(TRANSFER_KINDS.map(rewardEventTypeFor), [
      'cashback_earned',
      'branded_earned',
      'branded_spent',
      'branded_expired',
      'cashback_clawed_back',
      'branded_clawed_back',
      'cashback_adjusted',
      'branded_adjusted',
      'cashback_adjusted',
      'branded_adjusted',
      'cashback_adjusted',
      'cashback_paid_out',
      'cashback_clawed_back',
      'cashback_owed_repaid',
      'cashback_adjusted',
      // Funding and commission belong to the event of the reward they accompany; a payment to none.
      null,
      null,
      null,
      null,
      null,
      null,
    ]);
  });

  it('plans a cashback adjustment without a merchant', () => {
    const plan = planTransfer('adjust_credit_cashback', { issuerId: 'iss_1', chgId: 'chg_1', merchantId: '' });
    assert.deepEqual([plan.debit.id, plan.credit.id], ['iss_1:issuer_adjustments', 'iss_1:chg_cashback:chg_1']);
    assert.equal(plan.debit.normalSide, 'debit');
  });

  it('writes two entries that sum to zero, debit positive', () => {
    const [debit, credit] = entriesOf(planTransfer('earn_cashback', p), 250);
    assert.deepEqual([debit.amountMinor, credit.amountMinor], [250, -250]);
    assert.equal(debit.accountId, 'iss_1:merchant_receivable:mp_1');
    assert.throws(() => entriesOf(planTransfer('earn_cashback', p), 0));
    assert.throws(() => entriesOf(planTransfer('earn_cashback', p), 1.5));
  });
});

describe('core/ledger purchase lock order', () => {
  it('locks the group liabilities first, in id order, then what it owes, and the shared accounts after them', () => {
    const order = purchaseLockOrder('iss_1', 'chg_1', 'mp_1');
    assert.deepEqual(
      order.lockedFirst.map((a) => a.kind),
      ['chg_branded', 'chg_cashback'],
    );
    assert.deepEqual(
      order.lockedIfPresent.map((a) => a.kind),
      ['chg_cashback_owed'],
    );
    assert.deepEqual(
      order.lockedAtWrite.map((a) => a.kind),
      ['merchant_receivable'],
    );
    assert.deepEqual(
      order.createdWhenUsed.map((a) => a.kind),
      ['commission', 'issuer_funding'],
    );
    const ids = [...order.lockedFirst, ...order.lockedIfPresent, ...order.createdWhenUsed, ...order.lockedAtWrite].map(
      (a) => a.id,
    );
    assert.deepEqual(ids, [...ids].sort(), 'every account in the order every poster locks in');
  });
});

describe('core/ledger draw allocation', () => {
  it('takes up to the amount in the given order, never more than a grant holds', () => {
    const grants = [
      { grantId: 'a', remainingMinor: 100 },
      { grantId: 'b', remainingMinor: 0 },
      { grantId: 'c', remainingMinor: 50 },
    ];
    assert.deepEqual(allocateDraw(grants, 120), [
      { grantId: 'a', amountMinor: 100 },
      { grantId: 'c', amountMinor: 20 },
    ]);
    assert.deepEqual(allocateDraw(grants, 500), [
      { grantId: 'a', amountMinor: 100 },
      { grantId: 'c', amountMinor: 50 },
    ]);
    assert.deepEqual(allocateDraw(grants, 0), []);
  });

  it('orders grants by expiry, then creation, then id', () => {
    const d = (s: string) => new Date(s);
    const gs = [
      { id: 'z', expiresAt: d('2027-01-02'), createdAt: d('2026-01-01') },
      { id: 'y', expiresAt: d('2027-01-01'), createdAt: d('2026-01-02') },
      { id: 'x', expiresAt: d('2027-01-01'), createdAt: d('2026-01-02') },
      { id: 'w', expiresAt: d('2027-01-01'), createdAt: d('2026-01-01') },
    ];
    assert.deepEqual(
      [...gs].sort(compareFifo).map((g) => g.id),
      ['w', 'x', 'y', 'z'],
    );
  });
});
