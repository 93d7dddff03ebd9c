// Component names of the published schemas, declared once beside each schema:
// `named('Group', {...})` gives the schema a `title`, and api/openapi-components.ts turns every
// titled schema it meets into an entry of `components.schemas` and a `$ref` wherever it appears.
// A client generator then calls the type `Group` instead of inventing a name from the route.
// ajv validates with these very objects (a title is only an annotation), so what /openapi.json
// names is still exactly what is enforced.

const COMPONENT_NAME = /^[A-Z][A-Za-z0-9]{0,63}$/;

export interface NamedSchema {
  title: string;
  examples?: unknown[];
}

/**
 * The schema under a component name, with an example when given (`examples`, JSON Schema
 * 2020-12: shown by the reference page and checked against the schema by test/api/openapi-published.test.ts).
 * A title copied along with a spread (`{ ...groupSchema }`) is replaced: a copy is another schema.
 * `const T` keeps the schema's literal type, from which core/validated.ts derives its TypeScript type.
 */
export function named<const T extends object>(name: string, schema: T, example?: unknown): T & NamedSchema {
  if (!COMPONENT_NAME.test(name)) throw new Error(`schema name "${name}" must be PascalCase letters and digits`);
  const { title: _copied, examples: _copiedExamples, ...rest } = schema as T & Partial<NamedSchema>;
  return { title: name, ...rest, ...(example === undefined ? {} : { examples: [example] }) } as T & NamedSchema;
}

export function nameOf(schema: object): string | undefined {
  const title = (schema as { title?: unknown }).title;
  return typeof title === 'string' ? title : undefined;
}

export function exampleOf(schema: object): unknown {
  return (schema as { examples?: unknown[] }).examples?.[0];
}
