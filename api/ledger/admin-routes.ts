// Operator view of the ledger (API.md, Operator API): the trial balance, whole or per issuer,
// whole or a page at a time, and an account's entries.
import { defineRoute, type RouteSpec } from '../route';
import { idSchema } from '../schemas/common';
import type { AppDeps } from '../deps';
import { trialBalance } from '../../core/domain/trial-balance';
import { DEFAULT_PAGE_LIMIT, paginationQueryProperties } from '../pagination';
import { LedgerAccountEntries, TrialBalance } from './schemas';
import { trialBalancePage } from './trial-balance-page';
import { ACCOUNT_ID_PARAM, accountEntriesPage } from './account-entries';

// The trial balance predates pagination and its callers read every account from one answer,
// so paging is opt-in: no default limit here, and an answer without limit or cursor is whole.
const { default: _noDefault, ...trialBalanceLimit } = paginationQueryProperties.limit;

export function ledgerAdminRoutes(deps: AppDeps): RouteSpec[] {
  const { db } = deps;
  return [
    defineRoute({
      method: 'get',
      path: '/admin/v1/ledger/trial-balance',
      operationId: 'getTrialBalance',
      summary: 'Trial balance of the ledger: every account, and the total of all entries (0)',
      description:
        'Without `limit` or `cursor`: every account in one answer (nextCursor null), as before pagination. With either: one page ' +
        `of accounts (limit 1..200, default ${DEFAULT_PAGE_LIMIT}) in the same order; follow nextCursor. totalMinor is always ` +
        'the total of the whole ledger (or issuer) when the page was read; pages are read at different moments, so compare ' +
        'account figures taken from one page, and totalMinor from any.',
      tag: 'Operator',
      auth: 'operator',
      query: {
        type: 'object',
        additionalProperties: false,
        properties: {
          issuerId: idSchema('iss', "Only this issuer's accounts and entries."),
          limit: {
            ...trialBalanceLimit,
            description: `Accounts per page (1..200); with a cursor and no limit, ${DEFAULT_PAGE_LIMIT}.`,
          },
          cursor: paginationQueryProperties.cursor,
        },
      },
      responses: { 200: { description: 'The trial balance, or one page of it.', schema: TrialBalance } },
      async handle(ctx, { query }) {
        const issuer = query.issuerId ? { issuerId: query.issuerId } : {};
        if (query.limit === undefined && query.cursor === undefined) {
          ctx.body = { ...(await trialBalance(db, issuer)), nextCursor: null };
          return;
        }
        ctx.body = await trialBalancePage(db, {
          ...issuer,
          limit: query.limit ?? DEFAULT_PAGE_LIMIT,
          cursor: query.cursor,
        });
      },
    }),
    defineRoute({
      method: 'get',
      path: '/admin/v1/ledger/accounts/{accountId}/entries',
      operationId: 'listLedgerAccountEntries',
      summary: 'One ledger account and its entries, newest first (an account statement)',
      description:
        'The account (kind, owner, normal side, balance) and a page of its entries, each with its transfer (kind, idempotency key, ' +
        'reward event, purchase) and the other account of the transfer. Entries are signed as in ledger-entries: debits negative, ' +
        'credits positive. The account and its page are one snapshot.',
      tag: 'Operator',
      auth: 'operator',
      params: { accountId: ACCOUNT_ID_PARAM },
      query: { type: 'object', additionalProperties: false, properties: paginationQueryProperties },
      responses: { 200: { description: 'The account and a page of its entries.', schema: LedgerAccountEntries } },
      errorStatuses: [404],
      async handle(ctx, { params, query }) {
        ctx.body = await accountEntriesPage(db, params.accountId, query);
      },
    }),
  ];
}
