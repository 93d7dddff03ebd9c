// Schemas of the reward-events export: its query, each NDJSON line, and the CSV's description.
import { idSchema, sha256DigestSchema, timestampSchema } from '../schemas/common';
import { named } from '../schemas/named';
import { EXAMPLE_LATER, EXAMPLE_TIME, exampleId } from '../schemas/examples';
import { REWARD_EVENT_TYPES } from '../../core/ledger';
import { CSV_COLUMNS, EXPORT_FORMATS } from './format';
import { EXPORT_IDLE_LIMIT } from './stream';

/** The longest period one export covers: a year, leap day included. */
export const MAX_EXPORT_DAYS = 366;

export const exportQuerySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['from', 'to'],
  properties: {
    from: { ...timestampSchema, description: 'Start of the period, included (postedAt >= from).' },
    to: {
      ...timestampSchema,
      description: `End of the period, excluded (postedAt < to); after from, at most ${MAX_EXPORT_DAYS} days later.`,
    },
    format: { type: 'string', enum: EXPORT_FORMATS, default: 'ndjson', description: 'ndjson (default) or csv.' },
  },
} as const;

const rowExample = {
  record: 'reward_event',
  id: exampleId('brevt'),
  chgId: exampleId('chg'),
  transactionId: exampleId('txn'),
  sourceTransactionId: null,
  type: 'cashback_earned',
  amountMinor: 125,
  currency: 'usd',
  postedAt: EXAMPLE_TIME,
  transferId: '6f1c2a9e-4b7d-4e21-9c3a-0000000000f1',
  merchantId: exampleId('mp'),
  rewardGrantId: null,
  issuerShareMinor: 0,
  transferIds: ['6f1c2a9e-4b7d-4e21-9c3a-0000000000f1'],
} as const;
const EXAMPLE_DIGEST = '9f2d6c1b0e8a4f3d2c1b0a9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c';
const checksumExample = {
  record: 'checksum',
  from: EXAMPLE_TIME,
  to: EXAMPLE_LATER,
  generatedAt: EXAMPLE_LATER,
  count: 1,
  totals: [{ type: 'cashback_earned', currency: 'usd', count: 1, amountMinor: 125 }],
  digest: { algorithm: 'sha256', value: EXAMPLE_DIGEST },
} as const;

const nullableId = (description: string) => ({ type: ['string', 'null'], description });

export const RewardEventExportRow = named(
  'RewardEventExportRow',
  {
    type: 'object',
    additionalProperties: false,
    // Every column of the CSV, so both formats carry the same fields.
    required: [...CSV_COLUMNS],
    properties: {
      record: { type: 'string', const: 'reward_event' },
      id: idSchema('brevt'),
      chgId: idSchema('chg'),
      transactionId: nullableId(
        'The purchase (txn_) the event belongs to: its earnings, spends, the expiry of its grants and the clawbacks of its refunds.',
      ),
      sourceTransactionId: nullableId('The refund (txn_) that caused a clawback; null otherwise.'),
      type: { type: 'string', description: `${REWARD_EVENT_TYPES.join(', ')}; clients must tolerate new values.` },
      amountMinor: {
        type: 'integer',
        not: { const: 0 },
        description:
          'Minor units; positive, the type saying which way it moved, except cashback_adjusted and branded_adjusted: signed (a debit is negative), and cashback_paid_out and cashback_owed_repaid: always negative (cashback leaving the balance).',
      },
      currency: { type: 'string', enum: ['usd'] },
      postedAt: {
        ...timestampSchema,
        description: 'When the event and its transfer were posted to the ledger; the period filters on it.',
      },
      transferId: nullableId('The ledger transfer that books the event (ledger-entries lists it with its entries).'),
      merchantId: nullableId('The merchant, when there is one.'),
      rewardGrantId: nullableId('The branded balance grant (rg_) earned, drawn or expired, when there is one.'),
      issuerShareMinor: {
        type: 'integer',
        minimum: 0,
        description:
          "On a funded offer, the issuer's share of amountMinor: of an earn, the share the issuer funds (debited to its " +
          'issuer_funding account); of a clawback, the share returned to it. 0 when the merchant funds the whole reward.',
      },
      transferIds: {
        type: 'array',
        items: { type: 'string' },
        description:
          "Every ledger transfer of the event: its own (transferId) first, then on a funded offer the issuer's share and the " +
          "merchant's commission (or their returns, with a clawback). In CSV, one field with the ids separated by spaces.",
      },
    },
  },
  rowExample,
);

export const RewardEventExportChecksum = named(
  'RewardEventExportChecksum',
  {
    type: 'object',
    additionalProperties: false,
    required: ['record', 'from', 'to', 'generatedAt', 'count', 'totals', 'digest'],
    properties: {
      record: { type: 'string', const: 'checksum' },
      from: timestampSchema,
      to: timestampSchema,
      generatedAt: {
        ...timestampSchema,
        description: 'The snapshot the export was read from; events posted after it are not in it.',
      },
      count: { type: 'integer', minimum: 0, description: 'Reward events in the export.' },
      totals: {
        type: 'array',
        description:
          'Count and sum of amountMinor per type and currency, ordered by type then currency; types with no event are left out.',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['type', 'currency', 'count', 'amountMinor'],
          properties: {
            type: { type: 'string' },
            currency: { type: 'string' },
            count: { type: 'integer', minimum: 1 },
            amountMinor: {
              type: 'integer',
              description:
                'The sum: may be 0 or negative for the signed adjusted types, negative for the paid out and repaid types.',
            },
          },
        },
      },
      digest: sha256DigestSchema,
    },
  },
  checksumExample,
);

export const RewardEventExportLine = named(
  'RewardEventExportLine',
  {
    description: 'One line of the NDJSON export: a reward event, or the checksum record that ends the export.',
    oneOf: [RewardEventExportRow, RewardEventExportChecksum],
  },
  rowExample,
);

export const RewardEventExportCsv = named(
  'RewardEventExportCsv',
  {
    type: 'string',
    description:
      `RFC 4180 CSV, CRLF line ends. The header line names the columns (${CSV_COLUMNS.join(', ')}), then one row per reward ` +
      'event (record = reward_event, empty fields for nulls), then the checksum line: `#checksum count=<n> sha256=<hex> ' +
      'from=<t> to=<t> generatedAt=<t> totals=<type>:<currency>:<count>:<amountMinor>;...` (no comma, no quote: readers that ' +
      'skip `#` comment lines skip it). The digest covers every byte before that line, the header included.',
  },
  [
    CSV_COLUMNS.join(','),
    `reward_event,${exampleId('brevt')},${exampleId('chg')},${exampleId('txn')},,cashback_earned,125,usd,${EXAMPLE_TIME},6f1c2a9e-4b7d-4e21-9c3a-0000000000f1,${exampleId('mp')},`,
    `#checksum count=1 sha256=${EXAMPLE_DIGEST} from=${EXAMPLE_TIME} to=${EXAMPLE_LATER} generatedAt=${EXAMPLE_LATER} totals=cashback_earned:usd:1:125`,
    '',
  ].join('\r\n'),
);

export const EXPORT_DESCRIPTION =
  'Streams every reward event of the calling issuer posted in [from, to), ordered by postedAt then id, read in one snapshot ' +
  '(events posted while it streams are not in it; `generatedAt` in the checksum says when it was taken). ' +
  'NDJSON: one JSON object per line (RewardEventExportLine); CSV: header, rows, checksum line (RewardEventExportCsv). ' +
  'Both end with a checksum: the count, count and sum of amountMinor per type and currency, and the SHA-256 of every byte before ' +
  'that line. An export without its checksum line was cut off: discard it and ask again. Verify with `head -n -1 FILE | sha256sum`, ' +
  'and the totals against the rewards summaries of the same groups and period. A period still open (to after now) can gain events ' +
  'later; export closed periods for the books. 400 invalid_query when from is not before to or the period exceeds ' +
  `${MAX_EXPORT_DAYS} days. A client that stops reading for ${EXPORT_IDLE_LIMIT} loses the export (its connection is cut).`;
