// One ajv instance for request bodies, one for query strings (which arrive as text and are
// coerced to the schema's types). Schemas are compiled once, when their route module loads.
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { errors, type FieldError } from '../core/errors';
import { parseTimestamp } from '../core/timestamp';

function createAjv(coerceTypes: boolean): Ajv {
  // discriminator: a oneOf keyed by a field (an offer's reward kind) reports the errors of the
  // branch the field names only, not every branch's.
  const ajv = new Ajv({
    allErrors: true,
    strict: true,
    coerceTypes,
    useDefaults: true,
    removeAdditional: false,
    discriminator: true,
  });
  addFormats(ajv, ['uri']);
  // Stricter than ajv-formats' date-time, which lets leap seconds and other values through that
  // have no instant: every timestamp is read by the one parser (core/timestamp.ts).
  ajv.addFormat('date-time', { type: 'string', validate: (text: string) => parseTimestamp(text) !== undefined });
  // OpenAPI annotations we put in schemas; ajv ignores them.
  ajv.addKeyword('example');
  return ajv;
}

const bodyAjv = createAjv(false);
const queryAjv = createAjv(true);

export type Validator<T> = ValidateFunction<T>;

export function compileBody<T>(schema: object): Validator<T> {
  return bodyAjv.compile<T>(schema);
}

export function compileQuery<T>(schema: object): Validator<T> {
  return queryAjv.compile<T>(schema);
}

// Bound the list: a 10,000-element array of bad items must not produce a 10,000-entry reply.
const MAX_FIELD_ERRORS = 20;

/**
 * ajv's errors as API.md's field errors. `ruleMessages` (keyed by ajv's schemaPath) words the
 * rules ajv cannot explain itself, such as a field a condition forbids (a `false` schema).
 */
export function toFieldErrors(
  ajvErrors: ErrorObject[] | null | undefined,
  prefix = '',
  ruleMessages: Record<string, string> = {},
): FieldError[] {
  // An if/then/else failure also reports "must match the then schema" at the root: the
  // branch's own errors already say what is wrong, and where.
  const meaningful = (ajvErrors ?? []).filter((e) => e.keyword !== 'if');
  return meaningful.slice(0, MAX_FIELD_ERRORS).map((e) => {
    let path = prefix + e.instancePath;
    let message = e.message ?? 'is invalid';
    if (ruleMessages[e.schemaPath]) {
      message = ruleMessages[e.schemaPath];
    } else if (e.keyword === 'false schema') {
      message = 'is not allowed here';
    } else if (e.keyword === 'additionalProperties') {
      const extra = String((e.params as { additionalProperty: string }).additionalProperty);
      path = `${path}/${extra}`;
      message = 'is not a known field';
    } else if (e.keyword === 'required') {
      path = `${path}/${String((e.params as { missingProperty: string }).missingProperty)}`;
      message = 'is required';
    } else if (e.keyword === 'enum') {
      message = `must be one of: ${((e.params as { allowedValues: unknown[] }).allowedValues ?? []).join(', ')}`;
    }
    return { path: path || '/', message };
  });
}

export function assertValid<T>(
  validate: Validator<T>,
  value: unknown,
  reasonCode: 'invalid_body' | 'invalid_query' | 'invalid_id',
  what: string,
): asserts value is T {
  if (!validate(value)) {
    throw errors.validation(reasonCode, `The ${what} is invalid.`, toFieldErrors(validate.errors));
  }
}
