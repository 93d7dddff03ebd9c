// JSON with every object's keys in sorted order (UTF-16 code units, as Array.prototype.sort
// and RFC 8785 order them), so that the same data sent with another key order or spacing has
// the same text: what the ingestion fingerprint and the Idempotency-Key request hash compare.
// Native JSON.stringify does the writing: given a list of property names it writes each
// object's properties in the list's order and leaves out the others, so the list of every key
// that occurs, sorted, gives the canonical text at native speed (an ingested event is one flat
// object: one Object.keys and one sort of 15 names).

export function canonicalJson(value: unknown): string {
  const keys = new Set<string>();
  collectKeys(value, keys, 0);
  // The list is looked up on every object, inherited properties included: "__proto__" would
  // read an object's prototype where it has no such key of its own. Request bodies cannot hold
  // it (api/middleware/json-body.ts refuses it); anything else takes the walk that reads own keys.
  if (keys.has('__proto__')) return sortedWalk(value);
  return JSON.stringify(value, [...keys].sort()) ?? 'null';
}

function sortedWalk(value: unknown): string {
  if (Array.isArray(value))
    return `[${value.map((item) => (item === undefined ? 'null' : sortedWalk(item))).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${sortedWalk((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

// Parsed JSON only (no toJSON, no cycles); bodies are screened to 32 levels on the way in
// (api/middleware/json-body.ts), and the bound here keeps any other caller from a deep recursion.
const MAX_DEPTH = 64;

function collectKeys(value: unknown, keys: Set<string>, depth: number): void {
  if (value === null || typeof value !== 'object') return;
  if (depth > MAX_DEPTH) throw new Error(`canonicalJson: nested deeper than ${MAX_DEPTH} levels`);
  if (Array.isArray(value)) {
    for (const item of value) collectKeys(item, keys, depth + 1);
    return;
  }
  for (const key of Object.keys(value)) {
    keys.add(key);
    collectKeys((value as Record<string, unknown>)[key], keys, depth + 1);
  }
}
