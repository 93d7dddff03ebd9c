// Every response the API tests receive is checked against /openapi.json: the operation its
// method and path name, the schema of its status. The document is the one the server renders
// (buildOpenApi over the declared routes); a violation fails the request that got it.
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { buildOpenApi } from '../../api/openapi';
import { declaredRoutes } from './routes';
import { brokenIdentities } from '../../api/balances/identities';
import type { RewardsSummary } from '../../api/balances/summary';

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  params: number;
}

let state:
  { ajv: Ajv2020; doc: any; operations: Operation[]; validators: Map<string, ValidateFunction | null> } | undefined;

function load() {
  if (state) return state;
  const doc = buildOpenApi(declaredRoutes(), 'test') as any;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  // An open list (api/schemas/common.ts, openEnum) accepts any string in the published document,
  // for clients; our own answers must still use the values it documents, so the list stays complete.
  ajv.addKeyword({
    keyword: 'x-extensible-enum',
    type: 'string',
    schemaType: 'array',
    validate: (known: string[], value: string) => known.includes(value),
  });
  ajv.addSchema({ ...doc, $id: 'openapi' });
  const operations: Operation[] = [];
  for (const [template, methods] of Object.entries<any>(doc.paths)) {
    for (const method of Object.keys(methods)) {
      const params = (template.match(/\{\w+\}/g) ?? []).length;
      const pattern = new RegExp(
        `^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{\w+\\?\}/g, '[^/]+')}$`,
      );
      operations.push({ method, template, pattern, params });
    }
  }
  // A literal segment wins over a parameter (bulk-upsert over {chgId}).
  operations.sort((a, b) => a.params - b.params);
  state = { ajv, doc, operations, validators: new Map() };
  return state;
}

const pointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Why a response breaks the document, or undefined when it conforms (or names no operation).
 * `text` is the raw body: a streamed NDJSON answer is checked line by line against its schema.
 */
export function contractViolation(
  method: string,
  url: string,
  status: number,
  contentType: string | null,
  body: unknown,
  text?: string,
): string | undefined {
  const { ajv, doc, operations, validators } = load();
  const path = url.split('?')[0];
  const operation = operations.find((o) => o.method === method.toLowerCase() && o.pattern.test(path));
  if (!operation) return undefined; // an undeclared route or method: the 404/405 error object is checked by its tests
  const responses = doc.paths[operation.template][operation.method].responses;
  const documentedAs = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => responses[k]);
  if (!documentedAs) return `${method} ${operation.template} answered ${status}, which its operation does not document`;
  // Shared error answers are components.responses, referenced by the operation.
  const ref: string | undefined = responses[documentedAs].$ref;
  const documented = ref
    ? doc.components.responses[ref.slice('#/components/responses/'.length)]
    : responses[documentedAs];
  const where = ref
    ? `openapi${ref}`
    : `openapi#/paths/${pointer(operation.template)}/${operation.method}/responses/${documentedAs}`;
  const media = documentedMedia(documented.content, contentType);
  if (media === undefined) return undefined; // no body documented (204)
  if (media === null)
    return `${method} ${operation.template} ${status}: content type ${contentType}, documented ${Object.keys(documented.content).join(' or ')}`;
  if (!documented.content[media].schema || !(media === 'application/json' || media === 'application/x-ndjson'))
    return undefined; // CSV, HTML, metrics: text
  const key = `${operation.method} ${operation.template} ${status}${media === 'application/json' ? '' : ` ${media}`}`;
  let validate = validators.get(key);
  if (validate === undefined) {
    validate = ajv.compile({ $ref: `${where}/content/${pointer(media)}/schema` });
    validators.set(key, validate);
  }
  // NDJSON: every line is one document of the schema.
  const documents =
    media === 'application/x-ndjson'
      ? (text ?? '')
          .split('\n')
          .filter((line) => line !== '')
          .map((line) => JSON.parse(line) as unknown)
      : [body];
  for (const document of documents) {
    if (!validate!(document))
      return `${key}: ${ajv.errorsText(validate!.errors, { separator: '; ' })} in ${JSON.stringify(document).slice(0, 300)}`;
  }
  // The summary's identities, which its description states (api/balances/identities.ts).
  if (key === 'get /api/v2/chg/{chgId}/rewards/summary 200') {
    const broken = brokenIdentities(body as RewardsSummary);
    if (broken.length > 0) return `${key}: breaks ${broken.join('; ')}`;
  }
  return undefined;
}

/** The documented media type the answer's Content-Type names; undefined when none is documented, null when another is. */
function documentedMedia(
  content: Record<string, { schema?: object }> | undefined,
  contentType: string | null,
): string | null | undefined {
  if (!content) return undefined;
  const received = (contentType ?? '').split(';')[0].trim().toLowerCase();
  return Object.keys(content).find((media) => media === received) ?? null;
}
