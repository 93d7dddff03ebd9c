// Pure ledger rules: the chart of accounts, the transfer plan, money checks (core/money.ts), draw arithmetic.
export * from './errors';
export * from '../money';
export * from './accounts';
export * from './plan';
export * from './fifo';
