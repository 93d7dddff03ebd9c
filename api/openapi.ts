// Renders /openapi.json from the route declarations: the schemas shown are the objects ajv
// enforces (the named ones gathered into components.schemas by api/openapi-components.ts), every
// route's error responses use the one error object (the shared ones as components.responses),
// and every answer lists the headers the middleware sets on it.
import { errorObjectSchema } from './schemas/common';
import { exampleId } from './schemas/examples';
import { CARD_NUMBER_REFUSED, ERROR_CLASSES, type ErrorName } from '../core/errors';
import { ResponseComponents, SchemaComponents } from './openapi-components';
import { bodyRequired, pathParamSchema, type PathPattern, type RouteSpec } from './route';
import type { IdPrefix } from '../core/ids';
import type { RateLimitSettings } from './middleware/rate-limit';
import { webhookComponents, webhooksSection } from './openapi-webhooks';
import { DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS } from '../workflows/webhook-delivery-contract';
import { CALLER_REQUEST_ID_PATTERN } from './middleware/request-id';
import { IDEMPOTENCY_KEY_HEADER, KEYED_METHODS, REPLAYED_HEADER } from './middleware/idempotency';
import { roleSentence, routeRole } from './operators/route-roles';

// Statuses any route can answer, whatever it does.
const SHARED_ERRORS: Record<number, string> = {
  500: 'Unexpected failure; the body says nothing internal. Quote `uuid` to support.',
  503: 'Database or workflow engine unreachable (`Retry-After` is set).',
};
const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input: `reasonCode` is invalid_body, invalid_json, invalid_query or invalid_id; `details.errors` lists JSON pointers.',
  401: 'Missing, malformed, unknown or revoked token.',
  403: 'Not allowed here (`reasonCode` says why).',
  404: "Not found; another issuer's ids are answered exactly like missing ones.",
  409: 'Conflict with stored state (`reasonCode` says which).',
  413: 'Body larger than 1 MiB.',
  415: 'Body not application/json.',
  422:
    'A card number (13 to 19 digits, spaces or dashes between them, passing the Luhn check) in a field of the body, in ' +
    'the query string or in the Idempotency-Key: `reasonCode` pan_detected, `details.errors` names where, never the value. ' +
    'Nothing was stored.',
};

// Idempotency-Key (api/middleware/idempotency.ts) on every POST, PUT, PATCH and DELETE.
const IDEMPOTENCY_KEY_PARAMETER = {
  name: IDEMPOTENCY_KEY_HEADER,
  in: 'header',
  required: false,
  description:
    'Makes a retry safe: the first request under a key runs, and the same request sent again under it (same method, path ' +
    'and body) gets the first answer (status, headers, body) with `Idempotent-Replayed: true`, without running again. Keys belong ' +
    'to the token and are kept 24 hours. Another request under a used key: 409 `idempotency_key_reused`; while the first still ' +
    'runs: 409 `idempotency_key_in_use` (retry after `Retry-After`). A request refused before it starts claims no key, so the ' +
    "same key may carry a corrected request: 401, an operator's 403 `forbidden_role`, 413, 415, 429 and a 400 for the body, query or path (`invalid_json`, " +
    '`invalid_body`, `invalid_query`, `invalid_id`). Answers of a request that ran are kept and replayed, 4xx included (a 404, ' +
    'a 409 conflict with stored state, a 400 such as `offer_not_active`); 5xx answers are not, so a retry runs again. ' +
    'Malformed: 400 `invalid_idempotency_key`.',
  schema: { type: 'string', pattern: '^[!-~]{1,255}$' },
  example: 'order-7d1f-retry-safe',
};
// api/middleware/request-id.ts: a caller's id that is a sane token is echoed, anything else is
// replaced, never refused: a tracing header some proxy rewrote must not cost the caller its request.
// So the parameter takes any string, and the description states the rule the server applies.
const REQUEST_ID_PARAMETER = {
  name: 'X-Request-Id',
  in: 'header',
  required: false,
  description:
    'Your id for this request, echoed in the X-Request-Id of the answer and written to our logs. A value matching ' +
    `\`${CALLER_REQUEST_ID_PATTERN}\` is echoed as sent; any other value (empty, too long, other characters) is never ` +
    'refused but replaced by an id we make (`req_...`), as when the header is absent.',
  schema: { type: 'string' },
  example: 'checkout-5c41a9',
};
const PARAMETERS = { RequestId: REQUEST_ID_PARAMETER, IdempotencyKey: IDEMPOTENCY_KEY_PARAMETER };
const KEYED_ERRORS: Record<number, string> = {
  400: 'Invalid input: `reasonCode` is invalid_body, invalid_json, invalid_query, invalid_id or invalid_idempotency_key; `details.errors` lists JSON pointers.',
  409:
    'Conflict (`reasonCode` says which): with stored state, or with an earlier request under the same Idempotency-Key ' +
    '(idempotency_key_reused: another request; idempotency_key_in_use: still running, see `Retry-After`).',
};

export interface OpenApiOptions {
  webhookRetryScheduleMs?: readonly number[];
  rateLimits?: RateLimitSettings;
}

export function buildOpenApi(routes: RouteSpec[], version: string, options: OpenApiOptions = {}): object {
  const components = new SchemaComponents(webhookComponents());
  components.publish(errorObjectSchema);
  const errorResponses = new ResponseComponents();
  const paths: Record<string, Record<string, object>> = {};
  for (const route of routes) {
    (paths[route.path] ??= {})[route.method] = operation(route, components, errorResponses);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Issuer Rewards Service',
      version,
      description:
        'Cardholder groups, merchant offers, transaction ingestion and reward reconciliation for card issuers. ' +
        'Money is integer minor units (fields ending in Minor); rates are basis points (Bps); timestamps are ISO 8601 UTC. ' +
        'Typed ids are a prefix and a lowercase UUID. Every response carries X-Request-Id. ' +
        'POST, PUT, PATCH and DELETE take an Idempotency-Key header that makes retrying them safe. ' +
        'Every string in a JSON body must be well-formed Unicode without NUL (U+0000): otherwise 400 invalid_body ' +
        '(on ingestion, a per-event failure). ' +
        'Lists of reasons and codes documented as open (`x-extensible-enum`) may gain values: treat an unknown one as "other". ' +
        rateLimitSummary(options.rateLimits),
    },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: {
        IssuerApiToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'Issuer API token (rwd_sk_...), created by the operator.',
        },
        OperatorToken: {
          type: 'http',
          scheme: 'bearer',
          description:
            "A named operator's token (rwd_op_..., POST /admin/v1/operators), whose roles decide what it may change; or " +
            "the deployment's OPERATOR_TOKEN, the break-glass account root with every role, unless OPERATOR_ROOT=disabled.",
        },
      },
      schemas: components.schemas,
      responses: errorResponses.responses,
      parameters: PARAMETERS,
      headers: RESPONSE_HEADERS,
    },
    paths,
    webhooks: webhooksSection(options.webhookRetryScheduleMs ?? DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS),
  };
}

function operation(route: RouteSpec, components: SchemaComponents, errorResponses: ResponseComponents): object {
  const keyed = KEYED_METHODS.has(route.method) && route.auth !== 'none';
  const body = route.body ?? route.documentedBody;
  const required = route.documentedBody ? true : body ? bodyRequired(body) : false;
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(describe(route) ? { description: describe(route) } : {}),
    tags: [route.tag],
    // The role table (api/operators/route-roles.ts), shown on every operator operation.
    ...(route.auth === 'operator' ? { 'x-required-role': routeRole(route) } : {}),
    security:
      route.auth === 'issuer' ? [{ IssuerApiToken: [] }] : route.auth === 'operator' ? [{ OperatorToken: [] }] : [],
    parameters: parameters(route, keyed, components),
    // A body of optional fields only may be left out (no body means {}), so it is not required.
    ...(body
      ? { requestBody: { required, content: { 'application/json': { schema: components.publish(body) } } } }
      : {}),
    responses: {
      ...withHeaders(route, keyed, ownResponses(route, keyed, components)),
      ...sharedErrors(route, keyed, errorResponses),
    },
  };
}

/** The answers the route declares itself. */
function ownResponses(route: RouteSpec, keyed: boolean, components: SchemaComponents): Record<string, Response> {
  const out: Record<string, Response> = {};
  for (const [status, spec] of Object.entries(route.responses)) {
    if (spec.content) {
      const content = Object.fromEntries(
        Object.entries(spec.content).map(([type, media]) => [
          type,
          { ...media, ...(media.schema ? { schema: components.publish(media.schema) } : {}) },
        ]),
      );
      out[status] = { description: spec.description, content };
    } else if (spec.schema) {
      out[status] = {
        description: spec.description,
        content: { 'application/json': { schema: components.publish(spec.schema) } },
      };
    } else if (spec.mediaType) {
      out[status] = { description: spec.description, content: { [spec.mediaType]: { schema: { type: 'string' } } } };
    } else {
      out[status] = { description: spec.description };
    }
    if (spec.links) out[status] = { ...out[status], links: spec.links };
  }
  if (keyed) {
    for (const [status, response] of Object.entries(out)) {
      // A route's own 400 or 409 (per-item results) can also be the Idempotency-Key's error object.
      const own = KEYED_ERRORS[Number(status)];
      if (own) out[status] = { ...response, description: `${response.description} Or an error object: ${own}` };
    }
  }
  return out;
}

// Names of the shared error answers: the status's, then what changes the answer's description
// or headers (an issuer route's rate limit headers, an Idempotency-Key, ingestion's event limit).
const ERROR_RESPONSE_NAMES: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  413: 'PayloadTooLarge',
  415: 'UnsupportedMediaType',
  422: 'UnprocessableContent',
  429: 'RateLimited',
  500: 'InternalError',
  503: 'Unavailable',
};

/** The error object for every error status the route can answer that it does not declare itself, by reference. */
function sharedErrors(route: RouteSpec, keyed: boolean, errorResponses: ResponseComponents): Record<string, object> {
  const descriptions = new Map<number, string>();
  for (const status of errorStatuses(route, keyed)) {
    descriptions.set(status, (keyed ? KEYED_ERRORS[status] : undefined) ?? ERROR_DESCRIPTIONS[status] ?? 'Error.');
  }
  for (const [status, description] of Object.entries(SHARED_ERRORS)) descriptions.set(Number(status), description);
  if (route.auth === 'issuer') descriptions.set(429, rateLimitedDescription(route));
  const variant = `${route.auth === 'issuer' ? 'Issuer' : ''}${keyed ? 'Keyed' : ''}${route.rateLimitEvents ? 'Events' : ''}`;
  for (const status of Object.keys(ownReasonCodesOf(route))) {
    if (!descriptions.has(Number(status)))
      descriptions.set(Number(status), ERROR_DESCRIPTIONS[Number(status)] ?? 'Error.');
  }
  const reasonCodes = ownReasonCodesOf(route);
  const out: Record<string, object> = {};
  for (const [status, shared] of [...descriptions].sort(([a], [b]) => a - b)) {
    if (route.responses[status]) continue;
    const own = reasonCodes[status];
    const description = own ? `${shared} ${ownReasonCodes(own)}` : shared;
    const name = ERROR_RESPONSE_NAMES[status] ?? `Error${status}`;
    const [response] = Object.values(withHeaders(route, keyed, { [status]: errorResponse(description, status) }));
    // A route's own reasonCodes make its answer its own; the others are shared by reference.
    out[String(status)] = own ? response : errorResponses.ref(`${name}${variant}`, response);
  }
  return out;
}

// A cursor is opaque: a well-formed string the list never issued is refused (api/pagination.ts).
const FOREIGN_CURSOR = 'a `cursor` that is not the `nextCursor` of a page of this list';

/** The route's own reasonCodes by status, with the one every paginated list shares. */
function ownReasonCodesOf(route: RouteSpec): Record<number, Record<string, string>> {
  const own = { ...route.reasonCodes };
  if (takesCursor(route)) own[400] = { invalid_query: FOREIGN_CURSOR, ...own[400] };
  const role = route.auth === 'operator' ? routeRole(route) : 'any';
  if (role !== 'any')
    own[403] = {
      forbidden_role:
        role === 'approval'
          ? 'the operator does not hold the role of the call the approval holds (`details.requiredRole`)'
          : `the operator does not hold the role ${role} (\`details.requiredRole\`)`,
      ...own[403],
    };
  return own;
}

const takesCursor = (route: RouteSpec): boolean =>
  Boolean((route.query as { properties?: Record<string, unknown> } | undefined)?.properties?.cursor);

/** The route's description, with what every paginated list refuses beyond its schema. */
function describe(route: RouteSpec): string | undefined {
  const cursor = takesCursor(route)
    ? `Pass \`nextCursor\` back unchanged: ${FOREIGN_CURSOR} is refused (400 invalid_query).`
    : undefined;
  const role = route.auth === 'operator' ? roleSentence(routeRole(route)) : undefined;
  const fourEyes = route.fourEyes
    ? `Four eyes: ${route.fourEyes.when} is held for a second operator (202 with an approval; nothing done until another operator approves it).`
    : undefined;
  const text = [route.description, cursor, role, fourEyes].filter(Boolean).join(' ');
  return text === '' ? undefined : text;
}

function ownReasonCodes(codes: Record<string, string>): string {
  const listed = Object.entries(codes).map(([code, when]) => `\`${code}\`: ${when}`);
  return `Also on this operation: ${listed.join('; ')}.`;
}

function errorStatuses(route: RouteSpec, keyed: boolean): Set<number> {
  const statuses = new Set<number>(route.errorStatuses ?? []);
  // Any query string, body or Idempotency-Key is looked at for card numbers (api/route.ts, json-body.ts).
  statuses.add(422);
  if (route.auth !== 'none') statuses.add(401);
  if (keyed) {
    statuses.add(400);
    statuses.add(409);
  }
  if (route.params || route.query || route.body) statuses.add(400);
  if (route.body ?? route.documentedBody) {
    statuses.add(400);
    statuses.add(413);
    statuses.add(415);
  }
  return statuses;
}

interface Response {
  description: string;
  content?: object;
  links?: object;
  headers?: Record<string, object>;
}

const errorResponse = (description: string, status: number): Response => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, ...errorExample(status) } },
});

// A typical error object of each status, so the reference shows a 429 as a 429 and not the
// Error schema's own example (a 404).
const ERROR_EXAMPLES: Record<number, { name: ErrorName; reasonCode?: string; message: string; details?: object }> = {
  400: {
    name: 'validation_failed',
    reasonCode: 'invalid_body',
    message: 'The request body is invalid.',
    details: { errors: [{ path: '/cardholders/0/cards/0/last4', message: 'must match pattern "^[0-9]{4}$"' }] },
  },
  401: { name: 'unauthenticated', reasonCode: 'invalid_token', message: 'The API token is not valid.' },
  404: { name: 'not_found', reasonCode: 'chg_not_found', message: 'No cardholder group with that id.' },
  409: {
    name: 'conflict',
    reasonCode: 'idempotency_key_reused',
    message: 'This Idempotency-Key was used for another request.',
  },
  413: { name: 'payload_too_large', message: 'The request body is larger than 1 MiB.' },
  415: { name: 'unsupported_media_type', message: 'Send the body as application/json.' },
  422: {
    name: 'unprocessable',
    reasonCode: 'pan_detected',
    message: CARD_NUMBER_REFUSED,
    details: { errors: [{ path: '/settings/metadata/note', message: 'holds a card number' }] },
  },
  429: {
    name: 'rate_limited',
    reasonCode: 'request_rate_exceeded',
    message: 'Rate limit of 100 requests per 1 s exceeded for this token; retry after 1 s.',
    details: { policy: 'default', limit: 100, windowSeconds: 1, retryAfterSeconds: 1 },
  },
  500: { name: 'internal_error', message: 'Something went wrong on our side; quote the uuid to support.' },
  503: {
    name: 'unavailable',
    reasonCode: 'database_unavailable',
    message: 'The database is unreachable; retry shortly.',
  },
};

function errorExample(status: number): { example?: object } {
  const example = ERROR_EXAMPLES[status];
  if (!example) return {};
  const { code, status: httpStatusCode } = ERROR_CLASSES[example.name];
  return { example: { code, httpStatusCode, uuid: exampleId('err'), ...example } };
}

const headerRef = (name: keyof typeof RESPONSE_HEADERS) => ({ $ref: `#/components/headers/${name}` });

/** The headers each answer carries, as the middleware sets them (api/middleware/*). */
function withHeaders(route: RouteSpec, keyed: boolean, responses: Record<string, Response>): Record<string, Response> {
  const out: Record<string, Response> = {};
  for (const [key, response] of Object.entries(responses)) {
    const status = Number(key);
    const headers: Record<string, object> = { 'X-Request-Id': headerRef('X-Request-Id') };
    // The limit is counted after authentication and before the body is read: 401 never carries
    // it, nor do the 413 and 415 the body parser answers first.
    if (route.auth === 'issuer' && ![401, 413, 415].includes(status)) {
      headers['RateLimit-Policy'] = headerRef('RateLimit-Policy');
      headers.RateLimit = headerRef('RateLimit');
    }
    if (status === 401) headers['WWW-Authenticate'] = headerRef('WWW-Authenticate');
    if (status === 429 || status === 503 || (keyed && status === 409))
      headers['Retry-After'] = headerRef('Retry-After');
    // Any answer but a 5xx may be a replay; a 429 never is (the limit is checked before the key).
    // Nor is an operator's 403: the role is checked before the key too (api/route.ts).
    const beforeKey = status === 429 || (route.auth === 'operator' && status === 403);
    if (keyed && status < 500 && !beforeKey) headers[REPLAYED_HEADER] = headerRef(REPLAYED_HEADER);
    out[key] = { ...response, headers };
  }
  return out;
}

function parameters(route: RouteSpec, keyed: boolean, components: SchemaComponents): object[] {
  return [
    ...Object.entries(route.params ?? {}).map(([name, prefix]) => ({
      name,
      in: 'path',
      required: true,
      schema: pathParamSchema(prefix),
      example: pathParamExample(prefix),
    })),
    ...queryParameters(route.query, components),
    { $ref: '#/components/parameters/RequestId' },
    ...(keyed
      ? [
          route.idempotencyKeyRequired
            ? {
                ...IDEMPOTENCY_KEY_PARAMETER,
                required: true,
                description: `Required here (400 \`idempotency_key_required\` without it). ${IDEMPOTENCY_KEY_PARAMETER.description}`,
              }
            : { $ref: '#/components/parameters/IdempotencyKey' },
        ]
      : []),
  ];
}

function queryParameters(query: object | undefined, components: SchemaComponents): object[] {
  const schema = query as { properties?: Record<string, object>; required?: string[] } | undefined;
  return Object.entries(schema?.properties ?? {}).map(([name, property]) => ({
    name,
    in: 'query',
    required: schema?.required?.includes(name) ?? false,
    schema: components.publish(property),
  }));
}

// Response headers, referenced by every answer that carries them (withHeaders above). Rate
// limits (api/middleware/rate-limit.ts) follow draft-ietf-httpapi-ratelimit-headers in its
// structured-field form.
const RESPONSE_HEADERS = {
  'X-Request-Id': {
    description:
      "The id of this request in our logs: yours when you sent a sane one, else ours (`req_...`). Quote it, with an error's `uuid`, to support.",
    schema: { type: 'string', pattern: CALLER_REQUEST_ID_PATTERN },
    example: 'req_0b6d3c52-8f0e-4c55-a1f2-6c1d2e3f4a5b',
  },
  'RateLimit-Policy': {
    description:
      'The token\'s quota policies (draft-ietf-httpapi-ratelimit-headers): `"default";q=<requests>;w=<window s>`, and on ' +
      'ingestion also `"events";q=<events>;w=<window s>`, whose quota units are events (the draft registers no such unit, so ' +
      'no `qu` is sent). Issuer routes only, once the token is known.',
    schema: { type: 'string' },
    example: '"default";q=100;w=1, "events";q=2000;w=1',
  },
  RateLimit: {
    description:
      'What is left of each policy in the current window: `"<policy>";r=<remaining>;t=<seconds until the window restarts>`.',
    schema: { type: 'string' },
    example: '"default";r=42;t=1',
  },
  'Retry-After': {
    description:
      'Seconds to wait before retrying: on a 429, the `t` of the exceeded policy (for `backlog_full`, a fixed half minute); ' +
      'on a 503, a short pause; on a 409 ' +
      '`idempotency_key_in_use`, until the first request under the key has likely finished.',
    schema: { type: 'integer', minimum: 1 },
    example: 1,
  },
  [REPLAYED_HEADER]: {
    description: 'Present (`true`) when this is the stored answer to an earlier request with the same Idempotency-Key.',
    schema: { type: 'string', const: 'true' },
    example: 'true',
  },
  'WWW-Authenticate': {
    description: 'The scheme the route expects.',
    schema: { type: 'string', const: 'Bearer' },
    example: 'Bearer',
  },
} as const;

function rateLimitSummary(limits: RateLimitSettings | undefined): string {
  const defaults = limits
    ? `This deployment's defaults: ${limits.requestsPerSecond} requests/s and, on ingestion, ${limits.eventsPerSecond} events/s, ` +
      `counted in windows of ${limits.windowSeconds} s (the quota of a window may be spent at once). `
    : '';
  return (
    'Issuer routes are rate limited per API token and API host (operator, health and documentation routes are not). ' +
    defaults +
    'The operator may override both rates per issuer. Answers after authentication carry RateLimit-Policy and RateLimit; ' +
    'over the limit the answer is 429 rate_limited with Retry-After.'
  );
}

function rateLimitedDescription(route: RouteSpec): string {
  const events = route.rateLimitEvents
    ? ' On this route every event of the body also counts against the "events" policy (events per second): ' +
      "reasonCode event_rate_exceeded, or batch_exceeds_event_limit when the batch alone is larger than a window's quota (send smaller batches)."
    : '';
  return (
    'Rate limit of this token exceeded: reasonCode request_rate_exceeded; `details` holds `policy`, `limit`, `windowSeconds` ' +
    `and \`retryAfterSeconds\`. Nothing was done; retry after Retry-After seconds.${events}`
  );
}

/** A typed id's example, or a path pattern's own (a ledger account key). */
function pathParamExample(param: IdPrefix | readonly IdPrefix[] | PathPattern): string | undefined {
  if (typeof param === 'string') return exampleId(param);
  if ('pattern' in param) return param.example;
  return exampleId(param[0]);
}
