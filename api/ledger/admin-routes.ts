// Operator view of the ledger (API.md, Operator API): the trial balance, whole or per issuer.
import { defineRoute, type RouteSpec } from '../route';
import { idSchema } from '../schemas/common';
import type { AppDeps } from '../deps';
import { trialBalance } from '../../activities/ledger';
import { ACCOUNT_KINDS } from '../../core/ledger';

const minor = { type: 'integer', description: 'Minor units (cents).' };

const trialBalanceSchema = {
  type: 'object',
  required: ['currency', 'accounts', 'totalMinor'],
  properties: {
    currency: { type: 'string', enum: ['usd'] },
    accounts: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'kind', 'issuerId', 'chgId', 'merchantId', 'debitsMinor', 'creditsMinor', 'balanceMinor'],
        properties: {
          id: { type: 'string', description: 'Deterministic account key: <issuerId>:<kind>[:<chgId>][:<merchantId>].' },
          kind: { type: 'string', enum: [...ACCOUNT_KINDS] },
          issuerId: idSchema('iss'),
          chgId: { type: ['string', 'null'] },
          merchantId: { type: ['string', 'null'] },
          debitsMinor: minor,
          creditsMinor: minor,
          balanceMinor: { type: 'integer', description: "Balance on the account's normal side: debit for merchant_receivable, credit for the others." },
        },
      },
    },
    totalMinor: { type: 'integer', description: 'Sum of all signed entries (debits positive); 0 in a healthy ledger.' },
  },
};

export function ledgerAdminRoutes(deps: AppDeps): RouteSpec[] {
  const { db } = deps;
  return [
    defineRoute<unknown, { issuerId?: string }>({
      method: 'get',
      path: '/admin/v1/ledger/trial-balance',
      operationId: 'getTrialBalance',
      summary: 'Trial balance of the ledger: every account, and the total of all entries (0)',
      tag: 'Operator',
      auth: 'operator',
      query: { type: 'object', additionalProperties: false, properties: { issuerId: idSchema('iss', 'Only this issuer\'s accounts and entries.') } },
      responses: { 200: { description: 'The trial balance.', schema: trialBalanceSchema } },
      async handle(ctx, { query }) {
        ctx.body = await trialBalance(db, query.issuerId ? { issuerId: query.issuerId } : {});
      },
    }),
  ];
}
