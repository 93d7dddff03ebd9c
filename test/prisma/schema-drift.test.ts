// schema.prisma and the SQL migrations are written by hand; this test keeps them honest by
// comparing the Prisma data model with the live, migrated database in both directions.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { testDatabaseUrl } from '../helpers/env';

interface ModelField {
  model: string;
  table: string;
  column: string;
  type: string;
  optional: boolean;
  list: boolean;
  nativeType?: string;
}

const SCALARS = new Set(['String', 'Int', 'BigInt', 'Boolean', 'DateTime', 'Json', 'Decimal', 'Float', 'Bytes']);

/** Reads model blocks of schema.prisma: enough of the grammar for the constructs we use. */
function parseSchema(text: string): ModelField[] {
  const fields: ModelField[] = [];
  for (const block of text.matchAll(/^model (\w+) \{([\s\S]*?)^\}/gm)) {
    const [, model, body] = block;
    const table = /@@map\("([^"]+)"\)/.exec(body)?.[1] ?? model;
    for (const line of body.split('\n')) {
      const m = /^\s*(\w+)\s+(\w+)(\[\])?(\?)?(.*)$/.exec(line);
      if (!m || !SCALARS.has(m[2])) continue;
      const attrs = m[5];
      fields.push({
        model,
        table,
        column: /@map\("([^"]+)"\)/.exec(attrs)?.[1] ?? m[1],
        type: m[2],
        list: Boolean(m[3]),
        optional: Boolean(m[4]),
        nativeType: /@db\.(\w+)/.exec(attrs)?.[1],
      });
    }
  }
  return fields;
}

function expectedDataType(field: ModelField): string {
  if (field.list) return 'ARRAY';
  switch (field.type) {
    case 'String':
      return 'text';
    case 'Int':
      return 'integer';
    case 'BigInt':
      return 'bigint';
    case 'Boolean':
      return 'boolean';
    case 'Json':
      return 'jsonb';
    case 'Bytes':
      return 'bytea';
    case 'DateTime':
      return field.nativeType === 'Timestamptz' ? 'timestamp with time zone' : 'timestamp without time zone';
    default:
      return field.type.toLowerCase();
  }
}

describe('prisma/schema.prisma against the migrated database', () => {
  const fields = parseSchema(readFileSync(join(__dirname, '..', '..', 'prisma', 'schema.prisma'), 'utf8'));
  let columns: Map<string, { data_type: string; is_nullable: string }>;

  before(async () => {
    const client = new pg.Client({ connectionString: testDatabaseUrl() });
    await client.connect();
    const { rows } = await client.query(
      `SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns
        WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'`,
    );
    await client.end();
    columns = new Map(rows.map((r) => [`${r.table_name}.${r.column_name}`, r]));
  });

  it('finds the models it parses', () => {
    assert.ok(fields.length > 20, `parsed only ${fields.length} fields`);
  });

  it('has every model column in the database with the same type and nullability', () => {
    const problems: string[] = [];
    for (const field of fields) {
      const key = `${field.table}.${field.column}`;
      const column = columns.get(key);
      if (!column) {
        problems.push(`${field.model}: ${key} missing in the database`);
        continue;
      }
      if (column.data_type !== expectedDataType(field)) {
        problems.push(`${key}: database ${column.data_type}, schema ${expectedDataType(field)}`);
      }
      // Prisma cannot declare a list optional, so an array column may be either.
      if (!field.list && (column.is_nullable === 'YES') !== field.optional)
        problems.push(`${key}: nullability differs`);
    }
    assert.deepEqual(problems, []);
  });

  it('has no database column that the schema does not know', () => {
    const known = new Set(fields.map((f) => `${f.table}.${f.column}`));
    assert.deepEqual(
      [...columns.keys()].filter((k) => !known.has(k)),
      [],
    );
  });
});
