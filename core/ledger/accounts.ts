// The chart of accounts (DESIGN.md, Ledger). Every account belongs to one issuer and has a
// deterministic id, so "create on first use" needs no lookup and concurrent first uses
// converge on the same row.

export const ACCOUNT_KINDS = ['merchant_receivable', 'chg_cashback', 'chg_branded', 'breakage'] as const;
export type AccountKind = (typeof ACCOUNT_KINDS)[number];
export type NormalSide = 'debit' | 'credit';

export interface AccountRef {
  id: string;
  issuerId: string;
  kind: AccountKind;
  chgId: string | null;
  merchantId: string | null;
  normalSide: NormalSide;
}

/** merchant_receivable is an asset (the merchant owes us); the group accounts are
 *  liabilities (we owe the group); breakage is income. */
export function normalSideOf(kind: AccountKind): NormalSide {
  return kind === 'merchant_receivable' ? 'debit' : 'credit';
}

/** Liability accounts may never hold a negative balance (a CHECK enforces it too). */
export function isLiability(kind: AccountKind): boolean {
  return kind === 'chg_cashback' || kind === 'chg_branded';
}

function ref(issuerId: string, kind: AccountKind, chgId: string | null, merchantId: string | null): AccountRef {
  if (!issuerId) throw new Error('account needs an issuer id');
  const parts = [issuerId, kind, chgId, merchantId].filter((p): p is string => p !== null);
  for (const p of parts) if (p.includes(':') || p.length === 0) throw new Error(`account id part not usable: "${p}"`);
  return { id: parts.join(':'), issuerId, kind, chgId, merchantId, normalSide: normalSideOf(kind) };
}

export const accounts = {
  merchantReceivable: (issuerId: string, merchantId: string) => ref(issuerId, 'merchant_receivable', null, merchantId),
  chgCashback: (issuerId: string, chgId: string) => ref(issuerId, 'chg_cashback', chgId, null),
  chgBranded: (issuerId: string, chgId: string, merchantId: string) => ref(issuerId, 'chg_branded', chgId, merchantId),
  breakage: (issuerId: string, merchantId: string) => ref(issuerId, 'breakage', null, merchantId),
};

/**
 * How a signed entry (positive = debit) moves an account's balance as its holder sees it:
 * a debit raises a debit-normal account and lowers a credit-normal one.
 */
export function balanceDelta(normalSide: NormalSide, signedEntryMinor: number): number {
  return normalSide === 'debit' ? signedEntryMinor : -signedEntryMinor;
}
