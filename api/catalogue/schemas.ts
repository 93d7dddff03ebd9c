// Request and response schemas of the catalogue (API.md: Merchants, offers; Operator API).
import { idSchema, nullableTimestampSchema, statusSchema, timestampSchema } from '../schemas/common';
import { named } from '../schemas/named';
import { EXAMPLE_LATER, EXAMPLE_TIME, exampleId } from '../schemas/examples';
import type { Validated } from '../../core/validated';
import { MAX_CASHBACK_HOLD_DAYS } from '../../core/rules/cashback';
import { MAX_LOOKBACK_DAYS, MERCHANT_HISTORY_KINDS, SEGMENT_PATTERN_SOURCE } from '../../core/rules/audience';
import { MERCHANT_STACKING } from '../../core/rules/stacking';

export const minorSchema = {
  type: 'integer',
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
  description: 'Integer minor units (cents).',
} as const;
// Request schemas spell "or null" with anyOf: the strict ajv instance rejects union types.
const orNull = <const S extends object>(schema: S, description?: string) => ({
  anyOf: [schema, { type: 'null' }] as const,
  ...(description ? { description } : {}),
});
const bpsSchema = {
  type: 'integer',
  minimum: 0,
  maximum: 10_000,
  description: 'Basis points (1/100 of a percent).',
} as const;
export const mccSchema = {
  type: 'string',
  pattern: '^[0-9]{4}$',
  description: 'ISO 18245 merchant category code.',
} as const;
const urlSchema = orNull({ type: 'string', format: 'uri', maxLength: 2048 });
const daysSchema = { type: 'integer', minimum: 0, maximum: 365 } as const;

export const MERCHANT_CATEGORIES_EXAMPLE = 'dining';

const brandedBalanceInput = {
  type: 'object',
  additionalProperties: false,
  properties: {
    enabled: { type: 'boolean' },
    spendMinimumMinor: minorSchema,
    availabilityDelayDays: {
      ...daysSchema,
      description: 'Merchant minimum availability delay of branded balance, in days.',
    },
    expiryDays: { type: 'integer', minimum: 1, maximum: 3650, description: 'Days after earning that a grant expires.' },
  },
} as const;

const matchRulesInput = {
  type: 'object',
  additionalProperties: false,
  description:
    'How card events are matched to the merchant, in production and in sandbox (unless a sandbox event forces an mp_ id): ' +
    'acquirer merchant ids (exact) first, then descriptor patterns (optionally limited to these MCCs).',
  properties: {
    descriptorPatterns: { type: 'array', maxItems: 50, items: { type: 'string', minLength: 2, maxLength: 100 } },
    acquirerMerchantIds: { type: 'array', maxItems: 50, items: { type: 'string', minLength: 1, maxLength: 64 } },
    mccs: { type: 'array', maxItems: 50, items: mccSchema },
  },
} as const;

const stackingSchema = {
  type: 'string',
  enum: MERCHANT_STACKING,
  description:
    "How the merchant's offers that qualify for one purchase combine: best_of (the default: the offer giving the most), " +
    'priority (the highest offer priority, ties to the most), or stack (every qualifying offer under its own caps, by ' +
    'priority then value, their sum capped at stackCapBps of the amount). The match trace lists every qualifying offer ' +
    'with why it applied or not (lower_value, lower_priority, stack_cap).',
} as const;
const stackCapSchema = orNull(
  { type: 'integer', minimum: 0, maximum: 10_000 },
  'Under stack (required with it), what the offers applied together may give a purchase, in bps of its amount. ' +
    'Read only under stack (null by default).',
);
const prioritySchema = {
  type: 'integer',
  minimum: -1000,
  maximum: 1000,
  description: "Under its merchant's priority stacking, the highest wins (0, the default).",
} as const;

const merchantFields = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  category: { type: 'string', minLength: 1, maxLength: 64, example: MERCHANT_CATEGORIES_EXAMPLE },
  status: statusSchema,
  logoUrl: urlSchema,
  websiteUrl: urlSchema,
  issuerIds: orNull(
    { type: 'array', minItems: 1, maxItems: 1000, uniqueItems: true, items: idSchema('iss') },
    'Issuers that see this merchant; null (the default) means every issuer.',
  ),
  brandedBalance: brandedBalanceInput,
  matchRules: matchRulesInput,
  stacking: stackingSchema,
  stackCapBps: stackCapSchema,
} as const;

// The sandbox catalogue's Blue Bottle Coffee (README walk-through): 5% cashback from $10, 3% branded balance.
const exampleBrandedBalance = {
  enabled: true,
  spendMinimumMinor: 500,
  availabilityDelayDays: 3,
  expiryDays: 365,
} as const;
const exampleMatchRules = { descriptorPatterns: ['BLUE BOTTLE'], acquirerMerchantIds: [], mccs: ['5814'] } as const;
const exampleMerchantFields = {
  name: 'Blue Bottle Coffee',
  category: 'dining',
  status: 'active',
  logoUrl: null,
  websiteUrl: 'https://bluebottlecoffee.com',
  brandedBalance: exampleBrandedBalance,
  stacking: 'best_of',
  stackCapBps: null,
} as const;
const exampleOfferFields = {
  title: '5% back, 3% in Blue Bottle balance',
  description: 'On purchases of $10 or more.',
  cashbackRateBps: 500,
  brandedRateBps: 300,
  minSpendMinor: 1000,
  maxRewardMinor: 2500,
  maxRewardPerChgMinor: null,
  maxRedemptionsPerChg: null,
  mccs: null,
  startsAt: EXAMPLE_TIME,
  endsAt: null,
  returnPeriodDays: null,
  budgetMinor: 5_000_000,
  budgetPeriod: 'month',
  funding: { issuerShareBps: 0 },
  activation: 'auto',
  audience: { segments: ['premium'], merchantHistory: { kind: 'lapsed', lookbackDays: 180 } },
  holdoutBps: 1000,
} as const;
const exampleCommission = { rateBps: 100, flatMinor: 0 } as const;
const exampleOffer = {
  id: exampleId('ofr'),
  merchantId: exampleId('mp'),
  ...exampleOfferFields,
  reward: { kind: 'percent', cashbackRateBps: 500, brandedRateBps: 300 },
  priority: 0,
  status: 'active',
} as const;

export const merchantCreateSchema = named(
  'MerchantInput',
  {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'category'],
    properties: { ...merchantFields, status: { ...statusSchema, default: 'active' } },
  },
  { ...exampleMerchantFields, issuerIds: null, matchRules: exampleMatchRules },
);

export const merchantPatchSchema = named(
  'MerchantPatch',
  { type: 'object', additionalProperties: false, minProperties: 1, properties: merchantFields },
  { status: 'inactive' },
);

const returnPeriodDaysSchema = orNull(
  { type: 'integer', minimum: 0, maximum: MAX_CASHBACK_HOLD_DAYS },
  "Days the cashback of a purchase stays on hold (the merchant's return window), from the purchase's createdAt, " +
    "before it is payable; null means the issuer's cashbackHoldDays.",
);

const budgetMinorSchema = orNull(
  minorSchema,
  'Total reward, cashback and branded, the offer may give across every group of every issuer per budgetPeriod; null ' +
    '(the default) means unlimited. A purchase at the edge gets what is left; after that the offer no longer qualifies ' +
    '(eligibility and match-trace reason offer_budget_exhausted). Refunds give their clawback back to the period the ' +
    'purchase used.',
);
const budgetPeriodSchema = orNull(
  { type: 'string', enum: ['month'] },
  "month: the budget resets each calendar month (UTC) of the purchase's date (on the issuer's clock); null (the " +
    "default): one budget for the offer's life.",
);
const issuerShareBpsSchema = {
  ...bpsSchema,
  description:
    "The issuer's share of each reward (cashback and branded), in basis points; the merchant funds the rest.",
} as const;
const fundingInput = {
  type: 'object',
  additionalProperties: false,
  description: 'Who funds the rewards: 0 (the default) means the merchant funds all of them.',
  properties: { issuerShareBps: issuerShareBpsSchema },
} as const;
const commissionRateBpsSchema = {
  ...bpsSchema,
  description:
    'Of the amount the reward is computed on (the purchase less its branded spend), per qualifying settled purchase.',
} as const;
const commissionFlatMinorSchema = { ...minorSchema, description: 'Added per qualifying settled purchase.' } as const;
const commissionInput = {
  type: 'object',
  additionalProperties: false,
  description:
    'What the merchant owes the programme per qualifying settled purchase (one that earns a reward), returned in ' +
    'proportion on refunds; billed on its statements. Operators only: issuers do not see it.',
  properties: { rateBps: commissionRateBpsSchema, flatMinor: commissionFlatMinorSchema },
} as const;

const activationSchema = {
  type: 'string',
  enum: ['opt_in', 'auto'],
  description:
    'opt_in (the default): a group qualifies once it has activated the merchant; auto: every group in the ' +
    'audience qualifies without activating it.',
} as const;
const segmentListSchema = {
  type: 'array',
  minItems: 1,
  maxItems: 20,
  uniqueItems: true,
  items: { type: 'string', pattern: SEGMENT_PATTERN_SOURCE },
} as const;
const audienceSchema = orNull(
  {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: {
      segments: { ...segmentListSchema, description: 'The group carries one of these.' },
      excludeSegments: { ...segmentListSchema, description: 'The group carries none of these.' },
      merchantHistory: {
        type: 'object',
        additionalProperties: false,
        required: ['kind', 'lookbackDays'],
        description:
          "The group's settled purchases at the merchant, not refunded in full, in the lookbackDays before it entered the " +
          'offer: new (none), lapsed (none, but one before), existing (one).',
        properties: {
          kind: { type: 'string', enum: MERCHANT_HISTORY_KINDS },
          lookbackDays: { type: 'integer', minimum: 1, maximum: MAX_LOOKBACK_DAYS },
        },
      },
    },
  },
  'Who the offer is for, decided once per group as of its entry into the offer (the later of startsAt and the ' +
    "group's creation); null (the default): every group. A change applies to groups entering later.",
);
const holdoutBpsSchema = {
  type: 'integer',
  minimum: 0,
  maximum: 5000,
  description:
    'The share of the audience held out as the control, in basis points (0, the default, to 5000): a stable hash of ' +
    'the offer and group decides, once; control groups never see nor earn the offer, and the lift report compares them.',
} as const;

const MAX_TIERS = 10;
const percentRewardSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['kind', 'cashbackRateBps', 'brandedRateBps'],
  description: 'The same rates on every qualifying purchase (the flat fields say the same).',
  properties: { kind: { const: 'percent' }, cashbackRateBps: bpsSchema, brandedRateBps: bpsSchema },
} as const;
const tierSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['minSpendMinor', 'cashbackRateBps', 'brandedRateBps'],
  properties: {
    minSpendMinor: { ...minorSchema, description: 'A purchase of at least this much earns at this tier.' },
    cashbackRateBps: bpsSchema,
    brandedRateBps: bpsSchema,
  },
} as const;
const tieredRewardSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['kind', 'tiers'],
  description:
    "The rates of the highest tier the whole purchase reaches (however it was paid); below the lowest tier it earns nothing. The flat fields show each rate's highest tier.",
  properties: {
    kind: { const: 'tiered' },
    tiers: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_TIERS,
      items: tierSchema,
      description: `1 to ${MAX_TIERS} tiers, minSpendMinor strictly ascending.`,
    },
  },
} as const;
const balanceTypeSchema = {
  type: 'string',
  enum: ['cashback', 'branded'],
  description: "The balance a completion's reward is paid to.",
} as const;
const repeatableSchema = {
  type: 'boolean',
  description:
    'false: one completion per group; true: a reward for each further completion, up to maxRedemptionsPerChg.',
} as const;
const spendXGetYRewardSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['kind', 'spendMinor', 'rewardMinor', 'balanceType', 'repeatable'],
  description:
    "rewardMinor (Y) when the group's net qualifying spend during the offer reaches spendMinor (X); repeatable: Y for each further X. A refund that takes the spend back below a completed X claws its Y back.",
  properties: {
    kind: { const: 'spend_x_get_y' },
    spendMinor: { ...minorSchema, minimum: 1, description: 'X: the spend one completion takes.' },
    rewardMinor: { ...minorSchema, minimum: 1, description: 'Y: the reward of one completion.' },
    balanceType: balanceTypeSchema,
    repeatable: repeatableSchema,
  },
} as const;
const nthPurchaseRewardSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['kind', 'purchases', 'balanceType', 'repeatable'],
  description:
    "The group's Nth qualifying purchase during the offer earns rewardMinor, or rateBps of its own amount (exactly one of the two). A refund that takes a purchase below the offer's minimum spend takes it out of the count.",
  properties: {
    kind: { const: 'nth_purchase' },
    purchases: { type: 'integer', minimum: 1, maximum: 1000, description: 'N: the purchases one completion takes.' },
    rewardMinor: { ...minorSchema, minimum: 1, description: 'The reward of one completion.' },
    rateBps: { ...bpsSchema, minimum: 1, description: "Or: this share of the completing purchase's amount." },
    balanceType: balanceTypeSchema,
    repeatable: repeatableSchema,
  },
} as const;

/** What a purchase earns: percent (the flat rates), tiered, or a cumulative kind. A body gives either this or the flat rates. */
const rewardSchema = {
  type: 'object',
  required: ['kind'],
  properties: { kind: { type: 'string', enum: ['percent', 'tiered', 'spend_x_get_y', 'nth_purchase'] } },
  discriminator: { propertyName: 'kind' },
  oneOf: [percentRewardSchema, tieredRewardSchema, spendXGetYRewardSchema, nthPurchaseRewardSchema],
  description:
    'What a qualifying purchase earns. Give either reward or the flat cashbackRateBps and brandedRateBps (a percent reward), not both.',
} as const;

const offerFields = {
  title: { type: 'string', minLength: 1, maxLength: 200 },
  description: orNull({ type: 'string', maxLength: 2000 }),
  cashbackRateBps: bpsSchema,
  brandedRateBps: bpsSchema,
  minSpendMinor: minorSchema,
  maxRewardMinor: orNull(minorSchema, 'Cap per transaction; null means none.'),
  maxRewardPerChgMinor: orNull(minorSchema, 'Cap per group over the life of the offer; null means none.'),
  maxRedemptionsPerChg: orNull(
    { type: 'integer', minimum: 1, maximum: 1_000_000 },
    'How many purchases of a group may earn from the offer (a purchase refunded in full gives its place back); null means no limit.',
  ),
  mccs: orNull(
    { type: 'array', minItems: 1, maxItems: 100, uniqueItems: true, items: mccSchema },
    'Qualifying MCCs; null means any.',
  ),
  startsAt: timestampSchema,
  endsAt: orNull(timestampSchema, 'Exclusive end; null means open-ended. Set it to now to end the offer.'),
  returnPeriodDays: returnPeriodDaysSchema,
  budgetMinor: budgetMinorSchema,
  budgetPeriod: budgetPeriodSchema,
  funding: fundingInput,
  commission: commissionInput,
  activation: activationSchema,
  audience: audienceSchema,
  holdoutBps: holdoutBpsSchema,
  reward: rewardSchema,
  priority: prioritySchema,
} as const;

export const offerCreateSchema = named(
  'OfferInput',
  {
    type: 'object',
    additionalProperties: false,
    required: ['title', 'startsAt'],
    properties: offerFields,
  },
  { ...exampleOfferFields, commission: exampleCommission },
);

export const offerPatchSchema = named(
  'OfferPatch',
  {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: {
      ...offerFields,
      status: { ...statusSchema, description: 'Catalogue status; inactive ends the offer for good.' },
    },
  },
  { endsAt: EXAMPLE_LATER },
);

// What the operator API, the admin CLI and the catalogue import pass to api/catalogue/store.ts:
// a patch's type, every field optional, which a create's body also fits.
export type MerchantInput = Validated<typeof merchantPatchSchema>;
export type OfferInput = Validated<typeof offerPatchSchema>;

const activationSummarySchema = {
  type: 'object',
  required: ['status', 'activatedAt', 'presentedOfferId'],
  properties: {
    status: { type: 'string', enum: ['active', 'inactive', 'not_activated'] },
    activatedAt: nullableTimestampSchema,
    presentedOfferId: { type: ['string', 'null'] },
  },
} as const;

const brandedBalanceSchema = {
  type: 'object',
  required: ['enabled', 'spendMinimumMinor', 'availabilityDelayDays', 'expiryDays'],
  properties: {
    enabled: { type: 'boolean' },
    spendMinimumMinor: minorSchema,
    availabilityDelayDays: { type: 'integer' },
    expiryDays: { type: 'integer' },
  },
} as const;

export const merchantSchema = named(
  'Merchant',
  {
    type: 'object',
    required: [
      'id',
      'name',
      'category',
      'status',
      'logoUrl',
      'websiteUrl',
      'brandedBalance',
      'stacking',
      'stackCapBps',
      'activation',
    ],
    properties: {
      id: idSchema('mp'),
      name: { type: 'string' },
      category: { type: 'string' },
      status: statusSchema,
      logoUrl: { type: ['string', 'null'] },
      websiteUrl: { type: ['string', 'null'] },
      brandedBalance: brandedBalanceSchema,
      stacking: stackingSchema,
      stackCapBps: stackCapSchema,
      activation: activationSummarySchema,
    },
  },
  {
    id: exampleId('mp'),
    ...exampleMerchantFields,
    activation: { status: 'active', activatedAt: EXAMPLE_TIME, presentedOfferId: exampleId('ofr') },
  },
);

export const adminMerchantSchema = named(
  'AdminMerchant',
  {
    type: 'object',
    required: [
      'id',
      'name',
      'category',
      'status',
      'issuerIds',
      'brandedBalance',
      'stacking',
      'stackCapBps',
      'matchRules',
      'createdAt',
      'updatedAt',
    ],
    properties: {
      ...merchantSchema.properties,
      issuerIds: { type: ['array', 'null'], items: { type: 'string' } },
      matchRules: {
        type: 'object',
        properties: {
          descriptorPatterns: { type: 'array', items: { type: 'string' } },
          acquirerMerchantIds: { type: 'array', items: { type: 'string' } },
          mccs: { type: 'array', items: { type: 'string' } },
        },
      },
      createdAt: timestampSchema,
      updatedAt: timestampSchema,
    },
  },
  {
    id: exampleId('mp'),
    ...exampleMerchantFields,
    issuerIds: null,
    matchRules: exampleMatchRules,
    createdAt: EXAMPLE_TIME,
    updatedAt: EXAMPLE_TIME,
  },
);
delete (adminMerchantSchema.properties as Record<string, unknown>).activation;

export const offerSchema = named(
  'Offer',
  {
    type: 'object',
    required: [
      'id',
      'merchantId',
      'title',
      'description',
      'cashbackRateBps',
      'brandedRateBps',
      'minSpendMinor',
      'maxRewardMinor',
      'maxRewardPerChgMinor',
      'maxRedemptionsPerChg',
      'mccs',
      'startsAt',
      'endsAt',
      'returnPeriodDays',
      'budgetMinor',
      'budgetPeriod',
      'funding',
      'activation',
      'audience',
      'holdoutBps',
      'reward',
      'priority',
      'status',
      'activated',
    ],
    properties: {
      id: idSchema('ofr'),
      merchantId: idSchema('mp'),
      title: { type: 'string' },
      description: { type: ['string', 'null'] },
      cashbackRateBps: { type: 'integer', description: "The cashback rate; of a tiered offer, its highest tier's." },
      brandedRateBps: { type: 'integer', description: "The branded rate; of a tiered offer, its highest tier's." },
      minSpendMinor: { type: 'integer' },
      maxRewardMinor: { type: ['integer', 'null'] },
      maxRewardPerChgMinor: { type: ['integer', 'null'] },
      maxRedemptionsPerChg: {
        type: ['integer', 'null'],
        description: 'How many purchases of a group may earn from the offer; null: no limit.',
      },
      mccs: { type: ['array', 'null'], items: { type: 'string' } },
      startsAt: timestampSchema,
      endsAt: nullableTimestampSchema,
      returnPeriodDays: returnPeriodDaysSchema,
      budgetMinor: budgetMinorSchema,
      budgetPeriod: budgetPeriodSchema,
      funding: {
        type: 'object',
        required: ['issuerShareBps'],
        properties: { issuerShareBps: issuerShareBpsSchema },
      },
      activation: activationSchema,
      audience: audienceSchema,
      holdoutBps: holdoutBpsSchema,
      reward: rewardSchema,
      priority: prioritySchema,
      status: {
        type: 'string',
        enum: ['scheduled', 'active', 'ended'],
        description: 'From the window and the catalogue status, at the time of the request.',
      },
      activated: {
        type: ['boolean', 'null'],
        description:
          'For an opt_in offer, whether the group has activated the merchant (the offer pays only then); null for an ' +
          'auto offer, which needs no activation.',
      },
      progress: {
        type: 'object',
        required: ['current', 'target', 'completions'],
        description:
          "A cumulative offer's progress for the group (spend_x_get_y in minor units, nth_purchase in purchases): " +
          'towards the next completion (the target itself once no further completion can be earned), and the ' +
          'completions rewarded. Only on the offers of a group, for the two cumulative kinds.',
        properties: {
          current: { type: 'integer', minimum: 0 },
          target: { type: 'integer', minimum: 1 },
          completions: { type: 'integer', minimum: 0 },
        },
      },
      relevance: {
        type: 'integer',
        minimum: 0,
        description:
          "Only in a group's list under sort=relevance: the offer's reward on the group's typical purchase at the " +
          'merchant (minor units), times a weight from 1,000 to 4,000 thousandths by how often and how recently the ' +
          "group bought there (up to 2,000) and elsewhere in the merchant's category (up to 1,000); the formula is in " +
          'the integration guide.',
      },
    },
  },
  { ...exampleOffer, activated: true },
);

/**
 * `?period=` of the operator's offer reads: the month whose budget use they show. A purchase draws
 * on the month of its own date, on its issuer's clock (core/rules/budget.ts), so a sandbox
 * issuer whose clock is ahead spends a month the server's clock has not reached.
 */
export const budgetMonthQuerySchema = {
  type: 'string',
  pattern: '^[0-9]{4}-(0[1-9]|1[0-2])$',
  description:
    "The calendar month (UTC, YYYY-MM) whose use `budget` shows for a monthly budget; the current month by default. A sandbox issuer's purchases draw on the month of their date on its own clock (GET /api/v2/sandbox/clock): pass that month to see them. A lifetime budget shows its whole life whatever the month.",
} as const;

/** The query of the operator's offer reads. */
export const adminOfferQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: { period: budgetMonthQuerySchema },
} as const;

const budgetUseSchema = {
  type: ['object', 'null'],
  description:
    'What the budget has given, for the current period or the month asked for with ?period= (null: the offer has no budget).',
  required: ['limitMinor', 'usedMinor', 'remainingMinor', 'period'],
  properties: {
    limitMinor: minorSchema,
    usedMinor: { ...minorSchema, description: 'Reward given in the period, net of what refunds clawed back.' },
    remainingMinor: { ...minorSchema, description: 'What is left: never below 0, even after the limit was lowered.' },
    period: {
      type: 'string',
      pattern: '^(lifetime|[0-9]{4}-[0-9]{2})$',
      description:
        "The period these figures are for: of a monthly budget, the month asked for with ?period= or else the current calendar month (UTC); else 'lifetime'.",
    },
  },
} as const;

export const adminOfferSchema = named(
  'AdminOffer',
  {
    type: 'object',
    required: [
      // The operator's view belongs to no group: whether one activated the merchant is not its to say.
      ...offerSchema.required.filter((field) => field !== 'activated'),
      'commission',
      'budget',
      'catalogueStatus',
      'createdAt',
      'updatedAt',
    ],
    properties: {
      ...offerSchema.properties,
      commission: {
        type: 'object',
        required: ['rateBps', 'flatMinor'],
        properties: { rateBps: commissionRateBpsSchema, flatMinor: commissionFlatMinorSchema },
      },
      budget: budgetUseSchema,
      catalogueStatus: statusSchema,
      createdAt: timestampSchema,
      updatedAt: timestampSchema,
    },
  },
  {
    ...exampleOffer,
    commission: exampleCommission,
    budget: { limitMinor: 5_000_000, usedMinor: 1_250_000, remainingMinor: 3_750_000, period: '2026-03' },
    catalogueStatus: 'active',
    createdAt: EXAMPLE_TIME,
    updatedAt: EXAMPLE_TIME,
  },
);
delete (adminOfferSchema.properties as Record<string, unknown>).activated;
