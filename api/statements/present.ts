// Statements as the operator reads them (API.md, "Funded offers", Statements).
import type { Statement, StatementPayment, StatementRun } from '../../prisma/generated/client';
import { fromDbMinor } from '../../core/ledger';

export function presentStatementRun(r: StatementRun) {
  return {
    id: r.id,
    period: r.period,
    status: r.status as 'processing' | 'completed' | 'failed',
    statementCount: r.statementCount,
    currency: 'usd' as const,
    totalDueMinor: fromDbMinor(r.totalDueMinor),
    ...(r.failureReason ? { failureReason: r.failureReason } : {}),
    createdAt: r.createdAt.toISOString(),
    completedAt: r.completedAt ? r.completedAt.toISOString() : null,
  };
}

export function presentStatement(s: Statement) {
  return {
    id: s.id,
    runId: s.runId,
    issuerId: s.issuerId,
    merchantId: s.merchantId,
    period: s.period,
    status: s.status as 'issued' | 'paid',
    currency: 'usd' as const,
    lines: {
      cashbackFundedMinor: fromDbMinor(s.cashbackFundedMinor),
      brandedFundedMinor: fromDbMinor(s.brandedFundedMinor),
      brandedSpentMinor: fromDbMinor(s.brandedSpentMinor),
      clawedBackMinor: fromDbMinor(s.clawedBackMinor),
      breakageMinor: fromDbMinor(s.breakageMinor),
      commissionMinor: fromDbMinor(s.commissionMinor),
    },
    totalDueMinor: fromDbMinor(s.totalDueMinor),
    paidMinor: fromDbMinor(s.paidMinor),
    transferCount: s.transferCount,
    createdAt: s.createdAt.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
  };
}

export function presentStatementPayment(p: StatementPayment, statement: Statement) {
  return {
    id: p.id,
    statementId: p.statementId,
    amountMinor: fromDbMinor(p.amountMinor),
    currency: 'usd' as const,
    reference: p.reference,
    transferId: p.transferId,
    createdAt: p.createdAt.toISOString(),
    statement: presentStatement(statement),
  };
}
