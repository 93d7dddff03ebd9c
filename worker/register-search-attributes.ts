// Registers our custom search attributes on a Temporal server that did not get them at
// start (a self-hosted cluster, the time-skipping test server). The dev server of
// `npm start` registers them with --search-attribute instead.
import type { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTE_DECLARATIONS } from '../workflows/search-attributes';

const { IndexedValueType } = temporal.api.enums.v1;
const TYPES = {
  Keyword: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  KeywordList: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};

export async function registerSearchAttributes(connection: Connection, namespace = 'default'): Promise<void> {
  const searchAttributes = Object.fromEntries(
    Object.entries(SEARCH_ATTRIBUTE_DECLARATIONS).map(([name, type]) => [name, TYPES[type]]),
  );
  try {
    await connection.operatorService.addSearchAttributes({ namespace, searchAttributes });
  } catch (err) {
    // Already registered (a restart) is fine; anything else is the operator's to see.
    if (!/already exists/i.test((err as Error).message)) throw err;
  }
}
