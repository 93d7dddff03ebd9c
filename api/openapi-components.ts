// Gathers the named schemas (api/schemas/named.ts) of the route declarations into
// `components.schemas` and puts a `$ref` in their place, so /openapi.json names each resource,
// list and error once and operations point at it. Only keyword positions that hold schemas are
// walked: a property called `title` (an offer's) is a property, not a name.
import { isDeepStrictEqual } from 'node:util';
import { nameOf } from './schemas/named';

// Keywords whose value is one schema, a list of schemas, or a map of name → schema.
const ONE_SCHEMA = [
  'items',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
];
const SCHEMA_LIST = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SCHEMA_MAP = ['properties', 'patternProperties', '$defs', 'dependentSchemas'];
// Our schemas nest a handful of levels; a deeper walk means a cycle or a mistake.
const MAX_DEPTH = 32;

export class SchemaComponents {
  readonly schemas: Record<string, object> = {};
  // Each declared schema object is walked once, however many routes share it.
  private readonly walked = new Map<object, object>();

  constructor(initial: Record<string, object> = {}) {
    for (const [name, schema] of Object.entries(initial)) this.register(name, schema);
  }

  /** The schema as published: every named schema in it (itself included) replaced by a $ref. */
  publish(schema: object): object {
    return this.walk(schema, 0, true) as object;
  }

  /** A schema in, the same schema published out: an object, or a boolean schema as it was. */
  private walk(schema: unknown, depth: number, mayRef: boolean): unknown {
    if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return schema; // boolean schemas
    if (depth > MAX_DEPTH)
      throw new Error(`schema nested more than ${MAX_DEPTH} levels: ${JSON.stringify(schema).slice(0, 200)}`);
    const name = nameOf(schema);
    if (name && mayRef) {
      this.register(name, this.walk(schema, depth + 1, false) as object);
      return { $ref: `#/components/schemas/${name}` };
    }
    const done = this.walked.get(schema);
    if (done) return done;
    const out: Record<string, unknown> = { ...schema };
    for (const key of ONE_SCHEMA) if (key in out) out[key] = this.walk(out[key], depth + 1, true);
    for (const key of SCHEMA_LIST)
      if (Array.isArray(out[key])) out[key] = (out[key] as unknown[]).map((s) => this.walk(s, depth + 1, true));
    for (const key of SCHEMA_MAP) {
      if (out[key] && typeof out[key] === 'object') {
        out[key] = Object.fromEntries(
          Object.entries(out[key] as object).map(([k, s]) => [k, this.walk(s, depth + 1, true)]),
        );
      }
    }
    this.walked.set(schema, out);
    return out;
  }

  /** Two different schemas under one name would make one of them lie: refused. */
  private register(name: string, published: object): void {
    registerOnce(this.schemas, name, published, 'schemas');
  }
}

/**
 * components.responses: the error answers many operations share, published once and referenced
 * (without them every operation repeated about ten error objects with their headers and examples).
 */
export class ResponseComponents {
  readonly responses: Record<string, object> = {};

  ref(name: string, response: object): { $ref: string } {
    registerOnce(this.responses, name, response, 'responses');
    return { $ref: `#/components/responses/${name}` };
  }
}

function registerOnce(into: Record<string, object>, name: string, value: object, kind: string): void {
  const existing = into[name];
  if (existing && !isDeepStrictEqual(existing, value)) {
    throw new Error(`two different ${kind} are named ${name}: give one of them its own name`);
  }
  into[name] = value;
}
