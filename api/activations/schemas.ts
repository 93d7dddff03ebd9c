// A group's activation of a merchant (API.md, Activation).
import { idSchema, nullableTimestampSchema } from '../schemas/common';
import { named } from '../schemas/named';
import { EXAMPLE_TIME, exampleId } from '../schemas/examples';

export const activationSchema = named(
  'Activation',
  {
    type: 'object',
    required: ['merchantId', 'chgId', 'status', 'activatedAt', 'presentedOfferId', 'deactivatedAt'],
    properties: {
      merchantId: idSchema('mp'),
      chgId: idSchema('chg'),
      status: { type: 'string', enum: ['active', 'inactive', 'not_activated'] },
      activatedAt: nullableTimestampSchema,
      presentedOfferId: { type: ['string', 'null'] },
      deactivatedAt: nullableTimestampSchema,
    },
  },
  {
    merchantId: exampleId('mp'),
    chgId: exampleId('chg'),
    status: 'active',
    activatedAt: EXAMPLE_TIME,
    presentedOfferId: exampleId('ofr'),
    deactivatedAt: null,
  },
);

export const activationInputSchema = named(
  'ActivationInput',
  {
    type: 'object',
    additionalProperties: false,
    properties: {
      presentedOfferId: {
        ...idSchema('ofr'),
        description: 'The active offer of this merchant through which the cardholder activated.',
      },
    },
  },
  { presentedOfferId: exampleId('ofr') },
);
