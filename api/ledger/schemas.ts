// Response schemas of the ledger's read routes: a transaction's lineage (issuer), an account's
// entries and the trial balance (operator). Each is named (api/schemas/named.ts), with an
// example, so the OpenAPI document publishes it as a component.
import { ACCOUNT_KINDS, TRANSFER_KINDS } from '../../core/ledger';
import { idSchema, timestampSchema } from '../schemas/common';
import { named } from '../schemas/named';
import { EXAMPLE_TIME, exampleId } from '../schemas/examples';

const EXAMPLE_TRANSFER_ID = '6f1c2a9e-4b7d-4e21-9c3a-0000000000f1';
const receivableId = `${exampleId('iss')}:merchant_receivable:${exampleId('mp')}`;
const cashbackId = `${exampleId('iss')}:chg_cashback:${exampleId('chg')}`;
const debitExample = {
  accountId: receivableId,
  accountKind: 'merchant_receivable',
  chgId: null,
  merchantId: exampleId('mp'),
  direction: 'debit',
  amountMinor: -125,
  currency: 'usd',
} as const;
const creditExample = {
  accountId: cashbackId,
  accountKind: 'chg_cashback',
  chgId: exampleId('chg'),
  merchantId: null,
  direction: 'credit',
  amountMinor: 125,
  currency: 'usd',
} as const;
const transferExample = {
  transferId: EXAMPLE_TRANSFER_ID,
  kind: 'earn_cashback',
  rewardEventId: exampleId('brevt'),
  rewardEventType: 'cashback_earned',
  transactionId: exampleId('txn'),
  postedAt: EXAMPLE_TIME,
  amountMinor: 125,
  currency: 'usd',
  entries: [debitExample, creditExample],
} as const;
const accountEntryExample = {
  entryId: '42',
  transferId: EXAMPLE_TRANSFER_ID,
  transferKind: 'earn_cashback',
  idempotencyKey: `settle:${exampleId('txn')}:cashback`,
  rewardEventId: exampleId('brevt'),
  transactionId: exampleId('txn'),
  postedAt: EXAMPLE_TIME,
  direction: 'credit',
  amountMinor: 125,
  currency: 'usd',
  counterAccountId: receivableId,
} as const;

const minor = { type: 'integer', description: 'Minor units (cents).' } as const;
const usd = { type: 'string', enum: ['usd'] } as const;
const nullableString = (description: string) => ({ type: ['string', 'null'], description });

/** How entries are signed in every ledger read (API.md, ledger-entries): debits negative. */
const SIGN_RULE =
  'Signed as API.md states for ledger entries: a debit is negative, a credit positive, so the entries of a transfer sum to 0. ' +
  '`direction` says the same in words.';

const accountKindSchema = {
  type: 'string',
  enum: [...ACCOUNT_KINDS],
  description:
    'merchant_receivable (asset, debit-normal: what the merchant owes for rewards it funds), chg_cashback and chg_branded ' +
    '(liabilities, credit-normal: what the group holds), breakage (income, credit-normal: expired branded balance).',
} as const;

const transferKindSchema = {
  type: 'string',
  description: `What the transfer did: ${TRANSFER_KINDS.join(', ')}. Clients must tolerate new values.`,
} as const;

const accountIdSchema = {
  type: 'string',
  description: 'Deterministic account key: <issuerId>:<kind>[:<chgId>][:<merchantId>].',
} as const;

/** One leg of a transfer, with the account it moves as the ledger models it. */
export const LedgerEntry = named(
  'LedgerEntry',
  {
    type: 'object',
    additionalProperties: false,
    required: ['accountId', 'accountKind', 'chgId', 'merchantId', 'direction', 'amountMinor', 'currency'],
    properties: {
      accountId: accountIdSchema,
      accountKind: accountKindSchema,
      chgId: nullableString('The group that owns the account (chg_cashback, chg_branded); null otherwise.'),
      merchantId: nullableString(
        'The merchant of the account (merchant_receivable, chg_branded, breakage); null otherwise.',
      ),
      direction: { type: 'string', enum: ['debit', 'credit'] },
      amountMinor: { ...minor, description: `Minor units. ${SIGN_RULE}` },
      currency: usd,
    },
  },
  debitExample,
);

/** A transfer behind one of the transaction's reward events, with its two entries. */
export const LedgerTransfer = named(
  'LedgerTransfer',
  {
    type: 'object',
    additionalProperties: false,
    required: [
      'transferId',
      'kind',
      'rewardEventId',
      'rewardEventType',
      'transactionId',
      'postedAt',
      'amountMinor',
      'currency',
      'entries',
    ],
    properties: {
      transferId: {
        type: 'string',
        format: 'uuid',
        description: "The transfer's id; the reward-events export names it too.",
      },
      kind: transferKindSchema,
      rewardEventId: idSchema('brevt', 'The reward event this transfer books (one transfer per reward event).'),
      rewardEventType: {
        type: 'string',
        description: "The reward event's type, as the activity feed and the export name it.",
      },
      transactionId: {
        ...nullableString("The purchase (txn_) the transfer belongs to; a refund's clawbacks name their purchase."),
      },
      postedAt: { ...timestampSchema, description: "When the transfer was posted (the reward event's postedAt)." },
      amountMinor: { ...minor, minimum: 1, description: 'The amount moved, positive.' },
      currency: usd,
      entries: { type: 'array', minItems: 2, items: LedgerEntry, description: 'Debit first, then credit.' },
    },
  },
  transferExample,
);

export const LedgerEntries = named(
  'LedgerEntries',
  {
    type: 'object',
    additionalProperties: false,
    required: ['transactionId', 'data'],
    properties: {
      transactionId: idSchema('txn'),
      data: {
        type: 'array',
        items: LedgerTransfer,
        description:
          'Every transfer behind the reward events reward-detail lists for this transaction (a purchase: its earnings, spends, the ' +
          'expiry of its grants and the clawbacks of its refunds; a refund: the clawbacks it caused), oldest first, read in one snapshot.',
      },
    },
  },
  { transactionId: exampleId('txn'), data: [transferExample] },
);

/** One entry of an account, with its transfer: an operator's account statement line. */
export const LedgerAccountEntry = named(
  'LedgerAccountEntry',
  {
    type: 'object',
    additionalProperties: false,
    required: [
      'entryId',
      'transferId',
      'transferKind',
      'idempotencyKey',
      'rewardEventId',
      'transactionId',
      'postedAt',
      'direction',
      'amountMinor',
      'currency',
      'counterAccountId',
    ],
    properties: {
      entryId: {
        type: 'string',
        pattern: '^[0-9]+$',
        description: "The entry's sequence number (posting order within the ledger).",
      },
      transferId: { type: 'string', format: 'uuid' },
      transferKind: transferKindSchema,
      idempotencyKey: {
        type: 'string',
        description: "The transfer's idempotency key: which effect of which purchase, refund or grant posted it.",
      },
      rewardEventId: nullableString('The reward event the transfer books.'),
      transactionId: nullableString('The purchase the transfer belongs to.'),
      postedAt: timestampSchema,
      direction: { type: 'string', enum: ['debit', 'credit'] },
      amountMinor: { ...minor, description: `Minor units. ${SIGN_RULE}` },
      currency: usd,
      counterAccountId: { ...accountIdSchema, description: 'The other account of the transfer.' },
    },
  },
  accountEntryExample,
);

const ledgerAccountSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'kind', 'issuerId', 'chgId', 'merchantId', 'normalSide', 'balanceMinor', 'currency'],
  properties: {
    id: accountIdSchema,
    kind: accountKindSchema,
    issuerId: idSchema('iss'),
    chgId: { type: ['string', 'null'] },
    merchantId: { type: ['string', 'null'] },
    normalSide: { type: 'string', enum: ['debit', 'credit'] },
    balanceMinor: { ...minor, description: "Balance on the account's normal side, in the same snapshot as this page." },
    currency: usd,
  },
} as const;

export const LedgerAccountEntries = named(
  'LedgerAccountEntries',
  {
    type: 'object',
    required: ['account', 'data', 'nextCursor'],
    properties: {
      account: ledgerAccountSchema,
      data: { type: 'array', items: LedgerAccountEntry },
      nextCursor: {
        type: ['string', 'null'],
        description: 'Pass as ?cursor= for the next page; null on the last page.',
      },
    },
    description: 'The account and one page of its entries, newest first (entryId descending), read in one snapshot.',
  },
  {
    account: {
      id: cashbackId,
      kind: 'chg_cashback',
      issuerId: exampleId('iss'),
      chgId: exampleId('chg'),
      merchantId: null,
      normalSide: 'credit',
      balanceMinor: 125,
      currency: 'usd',
    },
    data: [accountEntryExample],
    nextCursor: null,
  },
);

export const TrialBalance = named(
  'TrialBalance',
  {
    type: 'object',
    required: ['currency', 'accounts', 'totalMinor', 'nextCursor'],
    properties: {
      currency: usd,
      accounts: {
        type: 'array',
        items: {
          type: 'object',
          required: ['id', 'kind', 'issuerId', 'chgId', 'merchantId', 'debitsMinor', 'creditsMinor', 'balanceMinor'],
          properties: {
            id: accountIdSchema,
            kind: { type: 'string', enum: [...ACCOUNT_KINDS] },
            issuerId: idSchema('iss'),
            chgId: { type: ['string', 'null'] },
            merchantId: { type: ['string', 'null'] },
            debitsMinor: minor,
            creditsMinor: minor,
            balanceMinor: {
              type: 'integer',
              description:
                "Balance on the account's normal side: debit for merchant_receivable, credit for the others.",
            },
          },
        },
        description: 'Ordered by issuer, kind and id. Without `limit` or `cursor`, every account; with them, one page.',
      },
      totalMinor: {
        type: 'integer',
        description:
          "Sum of all signed entries (debits positive) of the whole ledger, or of the issuer's, never of the page alone; 0 in a healthy ledger.",
      },
      nextCursor: {
        type: ['string', 'null'],
        description: 'Pass as `cursor` for the next page; null on the last page and on an unpaginated answer.',
      },
    },
  },
  {
    currency: 'usd',
    accounts: [
      {
        id: receivableId,
        kind: 'merchant_receivable',
        issuerId: exampleId('iss'),
        chgId: null,
        merchantId: exampleId('mp'),
        debitsMinor: 125,
        creditsMinor: 0,
        balanceMinor: 125,
      },
      {
        id: cashbackId,
        kind: 'chg_cashback',
        issuerId: exampleId('iss'),
        chgId: exampleId('chg'),
        merchantId: null,
        debitsMinor: 0,
        creditsMinor: 125,
        balanceMinor: 125,
      },
    ],
    totalMinor: 0,
    nextCursor: null,
  },
);
