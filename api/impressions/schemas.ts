// Schemas of offer impressions (API.md, Targeted offers, "Impressions"): the batch the issuer's
// app reports and the answer, one result per item.
import { errorObjectSchema, idSchema, timestampSchema } from '../schemas/common';
import { named } from '../schemas/named';
import { EXAMPLE_TIME, exampleId } from '../schemas/examples';

export const MAX_IMPRESSIONS_PER_BATCH = 100;

/**
 * How far after the issuer's now an impression may be dated: the app's clock runs a little ahead
 * of ours. Beyond it the date is wrong, and a wrong date would count in a later report's window.
 */
export const IMPRESSION_CLOCK_SKEW_MS = 5 * 60_000;

export const PLACEMENT_PATTERN = '^[a-z0-9_-]{1,40}$';

export const impressionsInputSchema = named(
  'OfferImpressionsInput',
  {
    type: 'object',
    additionalProperties: false,
    required: ['impressions'],
    properties: {
      impressions: {
        type: 'array',
        minItems: 1,
        maxItems: MAX_IMPRESSIONS_PER_BATCH,
        description: `What the app showed the group (1 to ${MAX_IMPRESSIONS_PER_BATCH}), each stored or refused on its own.`,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['offerId'],
          properties: {
            offerId: idSchema('ofr', 'An offer listed for the group (one it is treated for).'),
            at: {
              ...timestampSchema,
              description:
                "When it was shown; default the issuer's now. At most 5 minutes after that now (the app's clock may run ahead).",
            },
            placement: {
              type: 'string',
              pattern: PLACEMENT_PATTERN,
              description: 'Where the app showed it, in the issuer’s own words (home_carousel, merchant_page...).',
            },
          },
        },
      },
    },
  },
  {
    impressions: [
      { offerId: exampleId('ofr'), at: EXAMPLE_TIME, placement: 'home_carousel' },
      { offerId: exampleId('ofr', 2) },
    ],
  },
);

export const IMPRESSION_STATUSES = ['stored', 'duplicate', 'refused'] as const;

export const impressionResultsSchema = named(
  'OfferImpressionResults',
  {
    type: 'object',
    additionalProperties: false,
    required: ['results'],
    properties: {
      results: {
        type: 'array',
        description: 'One per item, in the order sent.',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['index', 'offerId', 'status'],
          properties: {
            index: { type: 'integer', minimum: 0 },
            offerId: { type: 'string' },
            status: {
              type: 'string',
              enum: IMPRESSION_STATUSES,
              description:
                'stored; duplicate (the same offer, instant and placement were stored before: counted once); ' +
                'refused (error says why, nothing stored).',
            },
            at: { ...timestampSchema, description: 'The instant stored (absent when refused).' },
            error: errorObjectSchema,
          },
        },
      },
    },
  },
  {
    results: [
      { index: 0, offerId: exampleId('ofr'), status: 'stored', at: EXAMPLE_TIME },
      {
        index: 1,
        offerId: exampleId('ofr', 2),
        status: 'refused',
        error: {
          code: 40400,
          httpStatusCode: 404,
          uuid: exampleId('err'),
          message: `No offer ${exampleId('ofr', 2)}.`,
          name: 'not_found',
          reasonCode: 'offer_not_found',
        },
      },
    ],
  },
);
