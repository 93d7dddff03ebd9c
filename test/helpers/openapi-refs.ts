// /openapi.json references its shared parts (components.schemas, responses, parameters,
// headers); tests that read an operation's answers or parameters structurally read them inlined.
import assert from 'node:assert/strict';

type Kind = 'schemas' | 'responses' | 'parameters' | 'headers';

/** The value with every $ref into the named kinds of components replaced by what it names. */
export function inlineRefs(
  doc: any,
  value: unknown,
  kinds: readonly Kind[] = ['schemas', 'responses', 'parameters', 'headers'],
  depth = 0,
): any {
  assert.ok(depth < 64, 'a $ref cycle');
  if (Array.isArray(value)) return value.map((v) => inlineRefs(doc, v, kinds, depth + 1));
  if (typeof value !== 'object' || value === null) return value;
  const ref = (value as { $ref?: unknown }).$ref;
  if (typeof ref === 'string') {
    const [, , kind, name] = ref.split('/');
    if (kinds.includes(kind as Kind)) {
      assert.ok(doc.components[kind]?.[name], `${ref} names nothing`);
      return inlineRefs(doc, doc.components[kind][name], kinds, depth + 1);
    }
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, inlineRefs(doc, v, kinds, depth + 1)]));
}

/** The document with its shared answers, parameters and headers written out in every operation (schemas stay references). */
export function withSharedPartsInlined(doc: any): any {
  return { ...doc, paths: inlineRefs(doc, doc.paths, ['responses', 'parameters', 'headers']) };
}
