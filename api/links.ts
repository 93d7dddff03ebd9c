// OpenAPI links (OpenAPI 3.1, Link Object): from an answer holding an id to the operations that
// take it, so a client generator, a reader of /docs and a stateful fuzzer know where the id goes
// next (a group created → its merchants and rewards; a webhook listed → its replay).
import type { ResponseLink } from './route';

/** The same parameters passed to each operation, one link per operation, named after it. */
export function linksTo(
  operationIds: readonly string[],
  parameters: Record<string, string>,
): Record<string, ResponseLink> {
  return Object.fromEntries(operationIds.map((operationId) => [operationId, { operationId, parameters }]));
}

/** A value of the answer's JSON body, by JSON pointer. */
export const fromBody = (pointer: string): string => `$response.body#${pointer}`;

/** A path parameter of the request that got the answer. */
export const fromPath = (name: string): string => `$request.path.${name}`;
