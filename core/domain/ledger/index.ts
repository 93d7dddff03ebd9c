// Ledger effects: functions that take a Prisma transaction client so callers can combine
// them with their own writes in one database transaction.
export {
  postTransfer,
  postTransferInNewTransaction,
  type PostTransferInput,
  type PostedTransfer,
  type Transfer,
} from './transfers';
export { recordRewardEvent, type RecordRewardEventInput, type RewardEvent } from './reward-events';
export {
  createGrant,
  drawFromGrants,
  listExpiredGrants,
  MAX_GRANTS_PER_DRAW,
  type CreateGrantInput,
  type DrawInput,
  type DrawMode,
  type Grant,
} from './grants';
export {
  earnBranded,
  spendBranded,
  debitBranded,
  clawBackBranded,
  reverseBrandedCredit,
  expireGrant,
  type EarnBrandedInput,
  type DrawResult,
} from './branded';
export { trialBalance, type TrialBalance, type TrialBalanceAccount } from '../trial-balance';
export { ledgerInvariants, type InvariantViolation } from './invariants';
export { inTransaction, type Tx } from './tx';
