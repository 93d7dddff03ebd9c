// Renders /openapi.json from the route declarations: the schemas shown are the objects
// ajv enforces, and every route's error responses use the one error object.
import { errorObjectSchema } from './schemas/common';
import { bodyRequired, pathParamSchema, type RouteSpec } from './route';
import type { RateLimitSettings } from './middleware/rate-limit';
import { webhookComponents, webhooksSection } from './openapi-webhooks';
import { DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS } from '../workflows/webhook-delivery-contract';
import { IDEMPOTENCY_KEY_HEADER, KEYED_METHODS, REPLAYED_HEADER } from './middleware/idempotency';

// Statuses any route can answer, whatever it does.
const SHARED_ERRORS: Record<number, string> = {
  500: 'Unexpected failure; the body says nothing internal. Quote `uuid` to support.',
  503: 'Database or workflow engine unreachable (`Retry-After` is set).',
};
const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input: `reasonCode` is invalid_body, invalid_json, invalid_query or invalid_id; `details.errors` lists JSON pointers.',
  401: 'Missing, malformed, unknown or revoked token.',
  404: 'Not found; another issuer\'s ids are answered exactly like missing ones.',
  409: 'Conflict with stored state (`reasonCode` says which).',
  413: 'Body larger than 1 MiB.',
  415: 'Body not application/json.',
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
    'runs: 409 `idempotency_key_in_use` (retry after `Retry-After`). 4xx answers are kept and replayed; 5xx answers are not, ' +
    'so a retry runs again. Malformed: 400 `invalid_idempotency_key`.',
  schema: { type: 'string', pattern: '^[!-~]{1,255}$' },
};
const REPLAYED_RESPONSE_HEADER = {
  description: 'Present (`true`) when this is the stored answer to an earlier request with the same Idempotency-Key.',
  schema: { type: 'string', const: 'true' },
};
const KEYED_ERRORS: Record<number, string> = {
  400: 'Invalid input: `reasonCode` is invalid_body, invalid_json, invalid_query, invalid_id or invalid_idempotency_key; `details.errors` lists JSON pointers.',
  409: 'Conflict (`reasonCode` says which): with stored state, or with an earlier request under the same Idempotency-Key ' +
    '(idempotency_key_reused: another request; idempotency_key_in_use: still running, see `Retry-After`).',
};

export function buildOpenApi(
  routes: RouteSpec[],
  version: string,
  options: { webhookRetryScheduleMs?: readonly number[]; rateLimits?: RateLimitSettings } = {},
): object {
  const paths: Record<string, Record<string, object>> = {};
  for (const route of routes) {
    (paths[route.path] ??= {})[route.method] = operation(route);
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
        rateLimitSummary(options.rateLimits),
    },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: {
        IssuerApiToken: { type: 'http', scheme: 'bearer', description: 'Issuer API token (rwd_sk_...), created by the operator.' },
        OperatorToken: { type: 'http', scheme: 'bearer', description: 'The OPERATOR_TOKEN of the deployment.' },
      },
      schemas: { Error: errorObjectSchema, ...webhookComponents() },
      headers: RATE_LIMIT_HEADERS,
    },
    paths,
    webhooks: webhooksSection(options.webhookRetryScheduleMs ?? DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS),
  };
}

function operation(route: RouteSpec): object {
  const keyed = KEYED_METHODS.has(route.method) && route.auth !== 'none';
  const errorStatuses = new Set<number>([...(route.errorStatuses ?? [])]);
  if (route.auth !== 'none') errorStatuses.add(401);
  if (keyed) {
    errorStatuses.add(400);
    errorStatuses.add(409);
  }
  if (route.params || route.query || route.body) errorStatuses.add(400);
  const body = route.body ?? route.documentedBody;
  if (body) {
    errorStatuses.add(400);
    errorStatuses.add(413);
    errorStatuses.add(415);
  }
  const responses: Record<string, object> = {};
  for (const [status, spec] of Object.entries(route.responses)) {
    responses[status] = spec.content
      ? { description: spec.description, content: spec.content }
      : spec.schema
        ? { description: spec.description, content: { 'application/json': { schema: spec.schema } } }
        : { description: spec.description };
  }
  const errorResponse = (description: string) => ({
    description,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  });
  for (const status of [...errorStatuses].sort()) {
    responses[String(status)] ??= errorResponse((keyed ? KEYED_ERRORS[status] : undefined) ?? ERROR_DESCRIPTIONS[status] ?? 'Error.');
  }
  for (const [status, description] of Object.entries(SHARED_ERRORS)) responses[status] ??= errorResponse(description);
  if (route.auth === 'issuer') addRateLimitResponses(route, responses, errorResponse);
  if (keyed) {
    for (const [status, response] of Object.entries(responses)) {
      // A route's own 400 or 409 (per-item results) can also be the Idempotency-Key's error object.
      const own = route.responses[Number(status)] && KEYED_ERRORS[Number(status)];
      const description = own ? `${(response as { description: string }).description} Or an error object: ${own}` : undefined;
      // Any answer but a 5xx may be a replay; a 429 never is (the limit is checked before the key).
      if (Number(status) < 500 && Number(status) !== 429) {
        const headers = { ...((response as { headers?: object }).headers ?? {}), [REPLAYED_HEADER]: REPLAYED_RESPONSE_HEADER };
        responses[status] = { ...response, ...(description ? { description } : {}), headers };
      }
    }
  }
  const parameters = [
    ...Object.entries(route.params ?? {}).map(([name, prefix]) => ({
      name,
      in: 'path',
      required: true,
      schema: pathParamSchema(prefix),
    })),
    ...queryParameters(route.query),
    { name: 'X-Request-Id', in: 'header', required: false, schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' } },
    ...(keyed ? [IDEMPOTENCY_KEY_PARAMETER] : []),
  ];
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [route.tag],
    security: route.auth === 'issuer' ? [{ IssuerApiToken: [] }] : route.auth === 'operator' ? [{ OperatorToken: [] }] : [],
    parameters,
    // A body of optional fields only may be left out (no body means {}), so it is not required.
    ...(body ? { requestBody: { required: route.documentedBody ? true : bodyRequired(body), content: { 'application/json': { schema: body } } } } : {}),
    responses,
  };
}

function queryParameters(query: object | undefined): object[] {
  const schema = query as { properties?: Record<string, object>; required?: string[] } | undefined;
  return Object.entries(schema?.properties ?? {}).map(([name, property]) => ({
    name,
    in: 'query',
    required: schema?.required?.includes(name) ?? false,
    schema: property,
  }));
}

// Rate limits (api/middleware/rate-limit.ts): a 429 on every issuer route, and the IETF fields
// (draft-ietf-httpapi-ratelimit-headers, structured-field form) on its answers.
const RATE_LIMIT_HEADERS = {
  'RateLimit-Policy': {
    description:
      'The token\'s quota policies (draft-ietf-httpapi-ratelimit-headers): `"default";q=<requests>;w=<window s>`, and on ' +
      'ingestion also `"events";q=<events>;w=<window s>`, whose quota units are events (the draft registers no such unit, so ' +
      'no `qu` is sent).',
    schema: { type: 'string' },
    example: '"default";q=100;w=1, "events";q=2000;w=1',
  },
  RateLimit: {
    description: 'What is left of each policy in the current window: `"<policy>";r=<remaining>;t=<seconds until the window restarts>`.',
    schema: { type: 'string' },
    example: '"default";r=42;t=1',
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying; equals the `t` of the exceeded policy.',
    schema: { type: 'integer', minimum: 1 },
  },
};

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

function addRateLimitResponses(route: RouteSpec, responses: Record<string, object>, errorResponse: (d: string) => object): void {
  const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
  const limitHeaders = { 'RateLimit-Policy': ref('RateLimit-Policy'), RateLimit: ref('RateLimit') };
  for (const [status, response] of Object.entries(responses)) {
    if (Number(status) < 400) responses[status] = { ...response, headers: limitHeaders };
  }
  const events = route.rateLimitEvents
    ? ' On this route every event of the body also counts against the "events" policy (events per second): ' +
      'reasonCode event_rate_exceeded, or batch_exceeds_event_limit when the batch alone is larger than a window\'s quota (send smaller batches).'
    : '';
  responses['429'] = {
    ...errorResponse(
      'Rate limit of this token exceeded: reasonCode request_rate_exceeded; `details` holds `policy`, `limit`, `windowSeconds` ' +
        `and \`retryAfterSeconds\`. Nothing was done; retry after Retry-After seconds.${events}`,
    ),
    headers: { 'Retry-After': ref('Retry-After'), ...limitHeaders },
  };
}
