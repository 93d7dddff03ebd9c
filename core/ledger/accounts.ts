// The chart of accounts (DESIGN.md, Ledger). Every account belongs to one issuer and has a
// deterministic id, so "create on first use" needs no lookup and concurrent first uses
// converge on the same row.

export const ACCOUNT_KINDS = [
  'merchant_receivable',
  'chg_cashback',
  'chg_branded',
  'breakage',
  'issuer_adjustments',
  'chg_cashback_owed',
  'issuer_payable',
  'issuer_funding',
  'commission',
  'merchant_cash',
] as const;
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

/** merchant_receivable is an asset (the merchant owes us); issuer_adjustments too (the issuer
 *  owes us what its customer service credited, and is owed what it debited); chg_cashback_owed
 *  too (a group owes back cashback a refund reversed after it was paid out); issuer_funding too
 *  (the issuer owes its share of the rewards of funded offers); merchant_cash too (what merchants
 *  paid on their statements). The group accounts are liabilities (we owe the group),
 *  issuer_payable too (we owe the issuer the cashback it paid out for the programme); breakage
 *  and commission are income. */
const DEBIT_NORMAL: readonly AccountKind[] = [
  'merchant_receivable',
  'issuer_adjustments',
  'chg_cashback_owed',
  'issuer_funding',
  'merchant_cash',
];

export function normalSideOf(kind: AccountKind): NormalSide {
  return DEBIT_NORMAL.includes(kind) ? 'debit' : 'credit';
}

/** The group's liability accounts may never hold a negative balance (a CHECK enforces it too).
 *  issuer_payable, a liability of the programme as a whole, is only ever credited. */
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
  issuerAdjustments: (issuerId: string) => ref(issuerId, 'issuer_adjustments', null, null),
  chgCashbackOwed: (issuerId: string, chgId: string) => ref(issuerId, 'chg_cashback_owed', chgId, null),
  issuerPayable: (issuerId: string) => ref(issuerId, 'issuer_payable', null, null),
  issuerFunding: (issuerId: string) => ref(issuerId, 'issuer_funding', null, null),
  commission: (issuerId: string, merchantId: string) => ref(issuerId, 'commission', null, merchantId),
  merchantCash: (issuerId: string) => ref(issuerId, 'merchant_cash', null, null),
};

/**
 * How a signed entry (positive = debit) moves an account's balance as its holder sees it:
 * a debit raises a debit-normal account and lowers a credit-normal one.
 */
export function balanceDelta(normalSide: NormalSide, signedEntryMinor: number): number {
  return normalSide === 'debit' ? signedEntryMinor : -signedEntryMinor;
}

export interface PurchaseLockOrder {
  /** Locked before anything ledger-derived is read, in id order. */
  lockedFirst: AccountRef[];
  /** Locked with lockedFirst when they exist (never created for this): what the group owes. */
  lockedIfPresent: AccountRef[];
  /** Locked by the write statement, after (in id order) every account of lockedFirst. */
  lockedAtWrite: AccountRef[];
  /**
   * Locked by the write statement too, and created only when a posting uses them (a funded
   * offer's issuer share, a commission): most merchants and issuers never need them.
   */
  createdWhenUsed: AccountRef[];
}

/**
 * The accounts a purchase's settlement may touch, split by when each is locked. Every poster
 * takes row locks in account id order, which is what keeps two postings from deadlocking.
 * The group's liability accounts are locked up front, because the posting checks their
 * balances; so is what the group owes, if it ever owed anything (new cashback repays it first),
 * which sorts right after its cashback account ("chg_cashback:" < "chg_cashback_owed"). The
 * merchant's receivable is shared by every group buying there, the merchant's commission too,
 * and the issuer's funding account by every group of the issuer: locking them up front would
 * queue all those settlements behind each other for their whole transaction, so they are
 * locked by the write statement (in id order, core/domain/ledger/batch.ts) and held only until
 * commit. That is still in id order because their ids sort after the group's accounts
 * ("commission", "issuer_funding", "merchant_receivable" > "chg_*" after the same issuer
 * prefix), which this checks; as assets and income they have no balance to check.
 */
export function purchaseLockOrder(issuerId: string, chgId: string, merchantId: string): PurchaseLockOrder {
  const all = [
    accounts.merchantReceivable(issuerId, merchantId),
    accounts.chgCashback(issuerId, chgId),
    accounts.chgBranded(issuerId, chgId, merchantId),
  ];
  const lockedFirst = all.filter((r) => isLiability(r.kind)).sort((a, b) => (a.id < b.id ? -1 : 1));
  const lockedIfPresent = [accounts.chgCashbackOwed(issuerId, chgId)];
  const lockedAtWrite = all.filter((r) => !isLiability(r.kind));
  const createdWhenUsed = [accounts.commission(issuerId, merchantId), accounts.issuerFunding(issuerId)];
  const last = [...lockedFirst, ...lockedIfPresent].map((r) => r.id).sort()[
    lockedFirst.length + lockedIfPresent.length - 1
  ];
  for (const r of [...lockedAtWrite, ...createdWhenUsed])
    if (!(r.id > last)) throw new Error(`ledger invariant violated: ${r.id} must sort after the group's accounts`);
  return { lockedFirst, lockedIfPresent, lockedAtWrite, createdWhenUsed };
}
