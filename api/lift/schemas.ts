// Schemas of the lift report (API.md, Targeted offers, "Lift report"): its query and its answer
// for one offer or for all of a merchant's offers. The statistics are core/rules/lift.ts.
import { idSchema, timestampSchema } from '../schemas/common';
import { named } from '../schemas/named';
import { EXAMPLE_LATER, EXAMPLE_TIME, exampleId } from '../schemas/examples';

export const liftQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    issuerId: idSchema('iss', "Only this issuer's groups; default every issuer's."),
    from: {
      ...timestampSchema,
      description:
        "Start of the window, included; default the offer's startsAt (a merchant's: its earliest offer's startsAt).",
    },
    to: {
      ...timestampSchema,
      description: "End of the window, excluded; after from; default now (with issuerId, that issuer's now).",
    },
  },
} as const;

const minor = (description: string) => ({ type: 'integer', description }) as const;
const nullableInteger = (description: string) => ({ type: ['integer', 'null'], description }) as const;

const armSchema = named(
  'LiftArm',
  {
    type: 'object',
    additionalProperties: false,
    required: ['groups', 'purchasers', 'purchases', 'spendMinor', 'rewardMinor', 'impressions'],
    properties: {
      groups: {
        type: 'integer',
        minimum: 0,
        description: 'Groups enrolled in the arm (in the audience), buyers or not.',
      },
      purchasers: {
        type: 'integer',
        minimum: 0,
        description: 'Of those, groups whose spend in the window is above 0.',
      },
      purchases: {
        type: 'integer',
        minimum: 0,
        description: 'Their settled purchases at the merchant in the window, each not wholly refunded.',
      },
      spendMinor: minor('Their spend at the merchant in the window: settled purchases net of their refunds.'),
      rewardMinor: minor('What the offer paid them in the window, net of clawbacks (0 for the control arm).'),
      impressions: { type: 'integer', minimum: 0, description: 'Impressions of the offer reported for them.' },
    },
  },
  {
    groups: 9000,
    purchasers: 3600,
    purchases: 5400,
    spendMinor: 21_600_000,
    rewardMinor: 1_080_000,
    impressions: 27000,
  },
);

const figures = {
  window: {
    type: 'object',
    additionalProperties: false,
    required: ['from', 'to'],
    properties: { from: timestampSchema, to: timestampSchema },
  },
  treated: armSchema,
  control: armSchema,
  spendPerGroupMinor: {
    type: 'object',
    additionalProperties: false,
    required: ['treated', 'control'],
    description: "Each arm's mean spend per enrolled group; null for an arm with no groups.",
    properties: { treated: nullableInteger('Treated arm.'), control: nullableInteger('Control arm.') },
  },
  liftBps: nullableInteger(
    '(treated spend per group / control spend per group - 1) x 10,000; null when the control spent nothing.',
  ),
  ci95Bps: {
    type: 'array',
    minItems: 2,
    maxItems: 2,
    items: { type: ['integer', 'null'] },
    description:
      "Fieller's 95 % interval of liftBps, rounded outwards; [null, null] unless each arm has 100 purchasers and the " +
      "control's spend is clearly above 0 (docs/decisions/0047-holdout-and-lift.md).",
  },
  incrementalSpendMinor: nullableInteger(
    'Treated groups x (treated - control spend per group): the spend the offer added; null without a control.',
  ),
  costPerIncrementalMinor: nullableInteger(
    'Reward per 10,000 minor units of incremental spend, rounded up; null unless the incremental spend is above 0.',
  ),
} as const;

const FIGURES_REQUIRED = [
  'window',
  'treated',
  'control',
  'spendPerGroupMinor',
  'liftBps',
  'ci95Bps',
  'incrementalSpendMinor',
  'costPerIncrementalMinor',
] as const;

const exampleFigures = {
  window: { from: EXAMPLE_TIME, to: EXAMPLE_LATER },
  treated: {
    groups: 9000,
    purchasers: 3600,
    purchases: 5400,
    spendMinor: 21_600_000,
    rewardMinor: 1_080_000,
    impressions: 27000,
  },
  control: { groups: 1000, purchasers: 380, purchases: 560, spendMinor: 2_280_000, rewardMinor: 0, impressions: 0 },
  spendPerGroupMinor: { treated: 2400, control: 2280 },
  liftBps: 526,
  ci95Bps: [-310, 1420],
  incrementalSpendMinor: 1_080_000,
  costPerIncrementalMinor: 10000,
};

export const offerLiftSchema = named(
  'OfferLiftReport',
  {
    type: 'object',
    additionalProperties: false,
    required: ['offerId', ...FIGURES_REQUIRED],
    properties: { offerId: idSchema('ofr'), ...figures },
  },
  { offerId: exampleId('ofr'), ...exampleFigures },
);

export const merchantLiftSchema = named(
  'MerchantLiftReport',
  {
    type: 'object',
    additionalProperties: false,
    required: ['merchantId', 'offerIds', ...FIGURES_REQUIRED],
    properties: {
      merchantId: idSchema('mp'),
      offerIds: {
        type: 'array',
        items: idSchema('ofr'),
        description: "The merchant's offers added up: a group enrolled in two of them counts once in each.",
      },
      ...figures,
    },
  },
  { merchantId: exampleId('mp'), offerIds: [exampleId('ofr')], ...exampleFigures },
);
