// Schema pieces shared by several areas. Each is a plain JSON schema object: ajv validates
// with it and api/openapi.ts publishes it unchanged.
import { idPattern, type IdPrefix } from '../../core/ids';
import { ERROR_CLASSES } from '../../core/errors';
import { named } from './named';
import { exampleId } from './examples';

export const idSchema = (prefix: IdPrefix | readonly IdPrefix[], description?: string) => ({
  type: 'string' as const,
  pattern: idPattern(prefix),
  ...(description ? { description } : {}),
});

export { externalIdSchema } from '../../core/domain/external-id';

export const timestampSchema = { type: 'string', format: 'date-time', description: 'ISO 8601, UTC.' } as const;
export const nullableTimestampSchema = { type: ['string', 'null'], format: 'date-time' } as const;

export const statusSchema = { type: 'string', enum: ['active', 'inactive'] } as const;

/** The digest of a streamed file's last line: the SHA-256 of every byte before that line. */
export const sha256DigestSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['algorithm', 'value'],
  properties: {
    algorithm: { type: 'string', const: 'sha256' },
    value: {
      type: 'string',
      pattern: '^[0-9a-f]{64}$',
      description: 'Hex SHA-256 of every byte before the checksum line (`head -n -1 file | sha256sum`).',
    },
  },
} as const;

export const errorObjectSchema = named(
  'Error',
  {
    type: 'object',
    required: ['code', 'httpStatusCode', 'uuid', 'message'],
    properties: {
      code: {
        type: 'integer',
        enum: Object.values(ERROR_CLASSES).map((c) => c.code),
        description: 'Stable error class code; use it for durable handling.',
      },
      httpStatusCode: { type: 'integer' },
      uuid: { type: 'string', pattern: idPattern('err'), description: 'Error instance id; quote it to support.' },
      message: { type: 'string', description: 'Human-readable; must not drive decisions.' },
      name: { type: 'string', enum: Object.keys(ERROR_CLASSES) },
      reasonCode: { type: 'string', description: 'Machine-readable reason within the class.' },
      details: {
        type: 'object',
        additionalProperties: true,
        description:
          "Validation errors (`errors`), or what the reason needs (a rate limit's `policy`, `limit`, `retryAfterSeconds`...).",
        properties: {
          errors: {
            type: 'array',
            items: {
              type: 'object',
              required: ['path', 'message'],
              properties: {
                path: { type: 'string', description: 'JSON pointer into the request.' },
                message: { type: 'string' },
              },
            },
          },
        },
      },
    },
  },
  {
    code: 40400,
    httpStatusCode: 404,
    uuid: exampleId('err'),
    message: 'No cardholder group with that id.',
    name: 'not_found',
    reasonCode: 'chg_not_found',
  },
);

/**
 * A string whose known values are listed but which may gain others (API.md: "clients must
 * tolerate new values"). A closed `enum` would make generated clients reject a new reason; this
 * accepts any string and names the known ones in `x-extensible-enum` (the convention of
 * Zalando's API guidelines), the description and the examples. The API tests still hold our own
 * answers to the known values (test/helpers/contract.ts reads `x-extensible-enum` as an enum).
 */
export function openEnum(values: readonly string[], description: string) {
  return {
    type: 'string' as const,
    description: `${description} Known values: ${values.join(', ')}. Clients must tolerate new values.`,
    'x-extensible-enum': [...values],
    examples: [values[0]],
  };
}
