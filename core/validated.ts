// The TypeScript type of a value that passed a JSON schema, derived from the schema itself
// (json-schema-to-ts), so a schema and the type the code reads cannot drift: change a field in
// the schema and every reader of the old shape fails the typecheck.
//
// How to write a schema so that this works (docs/decisions/0008-types-from-schemas.md):
// - declare it as a literal (`as const`, or passed straight to named()/defineRoute, whose
//   type parameters are `const`), so `type: 'string'` stays the literal 'string';
// - closed lists are `as const` tuples (`enum: AUTH_STATES`), so the type is their union;
// - a field with a `default` is present in the type: ajv's useDefaults fills it in before the
//   handler runs;
// - if/then/else is read (a refund requires relatedTransactionId), so the type is the union of
//   the branches and `if (event.state === 'refunded')` narrows it.
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';

export type { JSONSchema };

export type Validated<S> = S extends JSONSchema ? FromSchema<S, { parseIfThenElseKeywords: true }> : never;
