// Operator view of the ledger (API.md, Operator API): the trial balance, whole or per issuer.
import { defineRoute, type RouteSpec } from '../route';
import { idSchema } from '../schemas/common';
import type { AppDeps } from '../deps';
import { trialBalance } from '../../activities/ledger';
import { ACCOUNT_KINDS } from '../../core/ledger';
import { named } from '../schemas/named';
import { exampleId } from '../schemas/examples';

const minor = { type: 'integer', description: 'Minor units (cents).' };

const trialBalanceSchema = named('TrialBalance', {
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
}, {
  currency: 'usd',
  accounts: [
    {
      id: `${exampleId('iss')}:merchant_receivable:${exampleId('mp')}`, kind: 'merchant_receivable', issuerId: exampleId('iss'), chgId: null,
      merchantId: exampleId('mp'), debitsMinor: 200, creditsMinor: 0, balanceMinor: 200,
    },
    {
      id: `${exampleId('iss')}:chg_cashback:${exampleId('chg')}`, kind: 'chg_cashback', issuerId: exampleId('iss'), chgId: exampleId('chg'),
      merchantId: null, debitsMinor: 0, creditsMinor: 125, balanceMinor: 125,
    },
    {
      id: `${exampleId('iss')}:chg_branded:${exampleId('chg')}:${exampleId('mp')}`, kind: 'chg_branded', issuerId: exampleId('iss'), chgId: exampleId('chg'),
      merchantId: exampleId('mp'), debitsMinor: 0, creditsMinor: 75, balanceMinor: 75,
    },
  ],
  totalMinor: 0,
});

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
