import assert from 'node:assert/strict';
import { TRANSFER_KINDS, planTransfer } from '../../../core/ledger';
import {
  EXCLUDED_FROM_STATEMENTS,
  RECEIVABLE_LINES,
  linesOf,
  periodBounds,
  periodOf,
  statementStatus,
  totalDue,
} from '../../../core/rules/statements';

const parties = { issuerId: 'iss_1', chgId: 'chg_1', merchantId: 'mp_1' };

describe('merchant statements (core/rules/statements.ts)', () => {
  it('places every transfer kind that moves a receivable on one line, except payments', () => {
    for (const kind of TRANSFER_KINDS) {
      const plan = planTransfer(kind, parties);
      const moves = [plan.debit.kind, plan.credit.kind].includes('merchant_receivable');
      const placed = RECEIVABLE_LINES[kind] !== undefined || EXCLUDED_FROM_STATEMENTS.includes(kind);
      assert.equal(
        placed,
        moves,
        `${kind}: ${moves ? 'moves a receivable but has no line' : 'has a line but moves none'}`,
      );
    }
  });

  it("totals to the receivable's net movement: debits add, credits take away", () => {
    const amounts: Array<{ kind: string; amountMinor: number }> = Object.keys(RECEIVABLE_LINES).map((kind, i) => ({
      kind,
      amountMinor: 100 + i * 7,
    }));
    const movement = amounts.reduce((sum, { kind, amountMinor }) => {
      const plan = planTransfer(kind as never, parties);
      return sum + (plan.debit.kind === 'merchant_receivable' ? amountMinor : -amountMinor);
    }, 0);
    const lines = linesOf(amounts, 55);
    assert.equal(totalDue(lines), movement);
    assert.equal(lines.breakageMinor, 55, 'breakage is information, outside the total');
    assert.throws(() => linesOf([{ kind: 'merchant_payment', amountMinor: 1 }]), /no statement line/);
  });

  it('nets the issuer share out of what the merchant funded and of what it got back', () => {
    const lines = linesOf([
      { kind: 'earn_cashback', amountMinor: 1000 },
      { kind: 'issuer_share_cashback', amountMinor: 250 },
      { kind: 'clawback_cashback', amountMinor: 400 },
      { kind: 'issuer_share_returned', amountMinor: 100 },
      { kind: 'commission_charged', amountMinor: 30 },
      { kind: 'commission_returned', amountMinor: 12 },
    ]);
    assert.deepEqual(
      [lines.cashbackFundedMinor, lines.clawedBackMinor, lines.commissionMinor, totalDue(lines)],
      [750, 300, 18, 468],
    );
  });

  it('is paid once payments cover the total, and at once when nothing is owed', () => {
    assert.equal(statementStatus(500, 499), 'issued');
    assert.equal(statementStatus(500, 500), 'paid');
    assert.equal(statementStatus(0, 0), 'paid');
    assert.equal(statementStatus(-20, 0), 'paid');
  });

  it('bills calendar months in UTC', () => {
    assert.deepEqual(periodBounds('2026-12'), {
      start: new Date('2026-12-01T00:00:00Z'),
      end: new Date('2027-01-01T00:00:00Z'),
    });
    assert.equal(periodOf(new Date('2026-11-30T23:59:59.999Z')), '2026-11');
    assert.throws(() => periodBounds('2026-13'), RangeError);
    assert.throws(() => periodBounds('26-11'), RangeError);
  });
});
