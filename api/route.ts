// Routes are declarations: method, path, auth, the ajv schemas of their input and output,
// and a handler that receives input already validated. The same declarations are mounted
// on the Koa router and rendered into /openapi.json (api/openapi.ts), so the document
// cannot drift from what is enforced.
import type Router from '@koa/router';
import type { Context } from 'koa';
import { idPattern, isId, type IdPrefix } from '../core/ids';
import { errors } from '../core/errors';
import { holdsCardNumber } from '../core/rules/card-numbers';
import type { JSONSchema, Validated } from '../core/validated';
import { assertValid, compileBody, compileQuery, type Validator } from './validation';
import type { AuthKind } from './middleware/auth';
import { withIdempotency, type Idempotency } from './middleware/idempotency';
import type { RateLimitedRoute } from './middleware/rate-limit';
import { requireRole, routeRole, type Authorize } from './operators/route-roles';
import type { AuditCall } from './audit/operator-calls';
import { routeAction } from './audit/route-actions';
import { APPROVABLE_ROUTES, type ApprovalGate } from './approvals/gate';
import type { FourEyesReason } from '../core/rules/four-eyes';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface RouteInput<B, Q> {
  params: Record<string, string>;
  query: Q;
  body: B;
}

export interface ResponseSpec {
  description: string;
  /** The JSON body's schema: ajv's, published in /openapi.json (named, api/schemas/named.ts). */
  schema?: object;
  /** A body that is not JSON (an HTML page, Prometheus text): its media type, published as a string. */
  mediaType?: string;
  /** Bodies that are not one JSON document (a streamed export): media type → schema and example. */
  content?: Record<string, { schema?: object; example?: unknown }>;
  /** OpenAPI links: the operations this answer's ids lead to (api/links.ts). */
  links?: Record<string, ResponseLink>;
}

/** An OpenAPI link: the operation, and each of its parameters as a runtime expression. */
export interface ResponseLink {
  operationId: string;
  parameters: Record<string, string>;
  description?: string;
}

/** A path parameter that is not a typed id (a ledger account key): its pattern, for ajv-free checks and the document. */
export interface PathPattern {
  pattern: string;
  description: string;
  /** Shown in /openapi.json and /docs. */
  example?: string;
}

export interface RouteSpec<B = unknown, Q = Record<string, unknown>> {
  method: HttpMethod;
  /** OpenAPI form: /api/v2/chg/{chgId}. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  auth: AuthKind;
  /** Path parameters that are typed ids, by parameter name (one prefix, or any of several), or another pattern. */
  params?: Record<string, IdPrefix | readonly IdPrefix[] | PathPattern>;
  query?: object;
  body?: object;
  /**
   * For routes that validate their body piece by piece (batches where each item fails on
   * its own): the schema published in /openapi.json. The handler must enforce it.
   */
  documentedBody?: object;
  /**
   * With documentedBody: the part of it checked before the handler (a batch around its items),
   * so that a malformed batch is refused like any invalid body, before an Idempotency-Key is
   * claimed. The handler checks each item against documentedBody.
   */
  envelope?: object;
  /**
   * Ingestion: each event of the body is accepted or refused on its own, so what the JSON screen
   * finds unsafe in one (a card number, a string PostgreSQL cannot hold) is that event's failure
   * (api/middleware/json-body.ts, unsafeItemsOf), not the whole request's. Every other route's
   * body is refused whole.
   */
  itemsFailAlone?: boolean;
  responses: Record<number, ResponseSpec>;
  /**
   * Ingestion: how many events the parsed body offers, each counted against the token's
   * events rate limit (api/middleware/rate-limit.ts). Runs before the body is validated.
   */
  rateLimitEvents?(body: unknown): number;
  /**
   * Four eyes (API.md, "Operators with names"): when the call needs a second operator, and the
   * rule that says so for one call (core/rules/four-eyes.ts). Such a call is answered 202 with an
   * approval and carried out only once another operator approves it (api/approvals/).
   */
  fourEyes?: {
    when: string;
    check(ctx: Context, input: RouteInput<unknown, Record<string, unknown>>): Promise<FourEyesReason | undefined>;
  };
  /** The Idempotency-Key header is required here (a posting that must never run twice). */
  idempotencyKeyRequired?: boolean;
  /** Error statuses this route can answer besides the ones every route shares. */
  errorStatuses?: number[];
  /**
   * reasonCodes this route answers with an error status besides the shared ones, each with when:
   * mostly what the server refuses in input that its schema cannot rule out (a cursor it never
   * issued, a date outside its window). Published in that status's description.
   */
  reasonCodes?: Record<number, Record<string, string>>;
  handle(ctx: Context, input: RouteInput<B, Q>): Promise<void>;
}

/** What the handler receives for a schema: its derived type, or `Absent` when the route declares none. */
type InputOf<S, Absent> = [S] extends [undefined] ? Absent : Validated<S>;

/**
 * A route whose handler input is typed from its own schemas (core/validated.ts): `input.body`
 * is what `body` accepts and `input.query` what `query` accepts after ajv's coercion and
 * defaults, so the declaration and the code that reads it cannot drift. A schema must keep its
 * literal type (inline, `as const`, or named()).
 */
export function defineRoute<
  const BS extends JSONSchema | undefined = undefined,
  const QS extends JSONSchema | undefined = undefined,
>(
  spec: Omit<RouteSpec, 'body' | 'query' | 'handle' | 'fourEyes'> & {
    body?: BS;
    query?: QS;
    handle(ctx: Context, input: RouteInput<InputOf<BS, unknown>, InputOf<QS, Record<string, unknown>>>): Promise<void>;
    fourEyes?: {
      when: string;
      check(
        ctx: Context,
        input: RouteInput<InputOf<BS, unknown>, InputOf<QS, Record<string, unknown>>>,
      ): Promise<FourEyesReason | undefined>;
    };
  },
): RouteSpec {
  return spec as unknown as RouteSpec;
}

const isPathPattern = (param: IdPrefix | readonly IdPrefix[] | PathPattern): param is PathPattern =>
  typeof param === 'object' && 'pattern' in param;

/** The schema a path parameter is checked against and documented with. */
export function pathParamSchema(param: IdPrefix | readonly IdPrefix[] | PathPattern): {
  type: 'string';
  pattern: string;
  description?: string;
} {
  return isPathPattern(param)
    ? { type: 'string', pattern: param.pattern, description: param.description }
    : { type: 'string', pattern: idPattern(param) };
}

interface CompiledRoute {
  spec: RouteSpec;
  body?: Validator<unknown>;
  query?: Validator<Record<string, unknown>>;
}

export function mountRoutes(
  router: Router,
  specs: RouteSpec[],
  guards: Record<AuthKind, (ctx: Context) => Promise<void>>,
  idempotency: Idempotency,
  guarded: {
    rateLimit?: (ctx: Context, route: RateLimitedRoute) => Promise<void>;
    authorize?: Authorize;
    /** Wraps a mutating operator call, so that it leaves its one row in the audit trail. */
    auditCall?: AuditCall;
    /** Holds a four-eyes call for a second operator instead of running it. */
    approvalGate?: ApprovalGate;
  } = {},
): void {
  // What an approval is carried out by: the held call's own route (api/approvals/admin-routes.ts).
  const approvable = new Map(specs.filter((s) => s.fourEyes).map((s) => [s.operationId, s]));
  const gate = guarded.approvalGate;
  const rateLimit = guarded.rateLimit ?? (async () => undefined);
  const authorize: Authorize = guarded.authorize ?? (async (ctx, _operationId, role) => requireRole(ctx, role));
  for (const spec of specs) {
    const bodySchema = spec.body ?? spec.envelope;
    const compiled: CompiledRoute = {
      spec,
      body: bodySchema ? compileBody(bodySchema) : undefined,
      query: spec.query ? compileQuery(spec.query) : undefined,
    };
    const koaPath = spec.path.replace(/\{(\w+)\}/g, ':$1');
    // Read once here: an operator route the role table does not name is never mounted.
    const role = spec.auth === 'operator' ? routeRole(spec) : undefined;
    // And its audit action: a mutating operator route the trail cannot name is never mounted.
    const audited = spec.auth === 'operator' && spec.method !== 'get' ? routeAction(spec) : undefined;
    const auditCall = guarded.auditCall;
    router[spec.method](spec.operationId, koaPath, async (ctx: Context) => {
      // Who calls is known first: an unauthenticated call has no operator to write a row for.
      await guards[spec.auth](ctx);
      const call = async () => {
        // Before the input is read or an Idempotency-Key claimed: a refused call changes nothing.
        if (role) await authorize(ctx, spec.operationId, role);
        await rateLimit(ctx, spec);
        const input = readInput(ctx, compiled);
        if (role) ctx.state[APPROVABLE_ROUTES] = approvable;
        // Held inside the key's scope: the maker's retry gets the same approval back.
        const hold = spec.fourEyes ? gate : undefined;
        const handle = hold
          ? async () => {
              if (!(await hold(ctx, spec, input))) await spec.handle(ctx, input);
            }
          : () => spec.handle(ctx, input);
        await withIdempotency(idempotency, ctx, spec, input, handle);
      };
      await (audited && auditCall ? auditCall(ctx, audited, call) : call());
    });
  }
}

/** A card number in the query string is refused before anything echoes its parameters (decision 0054). */
function refuseCardNumbers(query: Record<string, unknown>, schema: object | undefined): void {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> } | undefined)?.properties ?? {};
  for (const [name, value] of Object.entries(query)) {
    // A parameter the schema types as a number is a quantity (an amount), not text: bodies' numbers
    // are not screened either.
    if (['integer', 'number'].includes(properties[name]?.type as string)) continue;
    const values = Array.isArray(value) ? (value as unknown[]) : [value];
    if (holdsCardNumber(name) || values.some((v) => typeof v === 'string' && holdsCardNumber(v)))
      throw errors.panDetected(holdsCardNumber(name) ? '/' : `/${name}`);
  }
}

/** An object schema with required fields (or anything else) needs a body; all-optional objects do not. */
export function bodyRequired(schema: object): boolean {
  const s = schema as { type?: unknown; required?: unknown[]; minProperties?: number };
  return !(s.type === 'object' && (s.required?.length ?? 0) === 0 && (s.minProperties ?? 0) === 0);
}

function readInput(ctx: Context, route: CompiledRoute): RouteInput<unknown, Record<string, unknown>> {
  const params = (ctx as Context & { params: Record<string, string> }).params ?? {};
  for (const [name, prefix] of Object.entries(route.spec.params ?? {})) {
    if (isPathPattern(prefix)) {
      if (!new RegExp(prefix.pattern).test(params[name] ?? '')) {
        throw errors.validation('invalid_id', `${name} is malformed: ${prefix.description}`, [
          { path: `/${name}`, message: `must match ${prefix.pattern}` },
        ]);
      }
      continue;
    }
    if (!isId(prefix, params[name])) {
      const named = typeof prefix === 'string' ? `${prefix}_` : prefix.map((p) => `${p}_`).join(' or ');
      throw errors.validation(
        'invalid_id',
        `${name} must be a ${named} id (the prefix followed by a lowercase UUID).`,
        [{ path: `/${name}`, message: `must match ${idPattern(prefix)}` }],
      );
    }
  }
  const query: Record<string, unknown> = { ...ctx.query };
  refuseCardNumbers(query, route.spec.query);
  if (route.query) {
    assertValid(route.query, query, 'invalid_query', 'query string');
  } else if (Object.keys(query).length > 0) {
    throw errors.validation(
      'invalid_query',
      'This route takes no query parameters.',
      Object.keys(query).map((k) => ({ path: `/${k}`, message: 'is not a known parameter' })),
    );
  }
  let body = (ctx.request as { body?: unknown }).body;
  const bodySchema = route.spec.body ?? route.spec.envelope;
  if (route.body && bodySchema) {
    // A body whose every field is optional may be left out entirely: no body means {}.
    if (body === undefined && !bodyRequired(bodySchema)) body = {};
    if (body === undefined) throw errors.validation('invalid_body', 'A JSON request body is required.');
    assertValid(route.body, body, 'invalid_body', 'request body');
  }
  return { params, query, body };
}
