// Transaction ingestion (SPEC.md 4.4, API.md "Ingestion"): one event or up to 1000.
// 204 when all were accepted, 200 with the failures when some were, 400 when none were.
import type { Context } from 'koa';
import { defineRoute, type RouteSpec } from '../route';
import { issuerOf } from '../middleware/auth';
import { errors } from '../../core/errors';
import { compileBody } from '../validation';
import type { AppDeps } from '../deps';
import { ingestBatch } from './store';
import { eventsIngested } from '../../core/metrics';
import {
  authEventSchema,
  eventFailureReasonList,
  failuresSchema,
  MAX_EVENTS_PER_BATCH,
  settledEventSchema,
  type EventKind,
  type IngestedEvent,
} from './schemas';
import { unsafeItemsOf } from '../middleware/json-body';
import { BACKLOG_RETRY_AFTER_SECONDS, createBacklogGate, type BacklogGate } from './backlog';
import { readBacklog } from './store';
import { presentLag } from './present';
import { lagSchema } from './schemas';
import { DEFAULT_INGESTION_BACKLOG_LIMIT } from '../../core/config';

const validators = {
  auth: compileBody<IngestedEvent>(authEventSchema),
  settled: compileBody<IngestedEvent>(settledEventSchema),
};

function batchOf(body: unknown): unknown[] {
  if (Array.isArray(body)) {
    if (body.length === 0 || body.length > MAX_EVENTS_PER_BATCH) {
      throw errors.validation('invalid_body', `Send one event or an array of 1 to ${MAX_EVENTS_PER_BATCH} events.`, [
        { path: '/', message: `must hold 1 to ${MAX_EVENTS_PER_BATCH} events` },
      ]);
    }
    return body;
  }
  if (body !== null && typeof body === 'object') return [body];
  throw errors.validation('invalid_body', 'Send one event object or an array of events.', [
    { path: '/', message: 'must be an object or an array' },
  ]);
}

/** The ingestion routes' description in /openapi.json. */
const EVENTS_DESCRIPTION =
  `Accepts one event or an array of 1 to ${MAX_EVENTS_PER_BATCH}. Accepted means stored durably before the response; ` +
  'processing follows asynchronously. Re-sending an event with the same id is a no-op; the same id with other content is ' +
  `a failure with reasonCode id_conflict. Failure reasons: ${eventFailureReasonList}. Whatever is wrong inside one event ` +
  '(a bad field, a NUL or an unpaired surrogate in a string, a __proto__ key, nesting too deep) fails that event alone ' +
  '(invalid_event); a refund or settlement in another currency than the purchase or authorization it names fails with ' +
  'currency_mismatch, and so does an authorization in another currency than a settlement already stored for it. ' +
  'An event whose cardLast4 or network ' +
  "is not its card's, or a refund whose card is in another cardholder group than its purchase, is refused, never stored; " +
  'an event already stored under that id is still answered as a re-submission. ' +
  'Rate limited in events per second, not only requests: every event of the body counts against the token\'s "events" ' +
  'policy (and the request against its "default" policy), valid or not, before anything is stored; a batch over the ' +
  "remaining quota is refused whole with 429 rate_limited (none of it stored), and a batch larger than a whole window's " +
  'quota with reasonCode batch_exceeds_event_limit. ' +
  "While the issuer's events waiting to be processed number its backlog limit or more (GET /api/v2/ingestion/lag), " +
  `a request is refused whole with 429 reasonCode backlog_full and Retry-After: ${BACKLOG_RETRY_AFTER_SECONDS}; ` +
  "other issuers' requests are not affected.";

export function ingestionRoutes(deps: AppDeps): RouteSpec[] {
  // Built at the first request: declaring the routes (for /openapi.json) needs no deps.
  let gate: BacklogGate | undefined;
  const backlog = () => (gate ??= createBacklogGate(deps.db, defaultBacklogLimit(deps), deps.logger));
  return [...eventRoutes(deps, backlog), lagRoute(deps)];
}

const defaultBacklogLimit = (deps: AppDeps) => deps.config.ingestionBacklogLimit ?? DEFAULT_INGESTION_BACKLOG_LIMIT;

function eventRoutes(deps: AppDeps, backlog: () => BacklogGate): RouteSpec[] {
  const route = (kind: EventKind, path: string, operationId: string, summary: string, schema: object) =>
    defineRoute({
      method: 'post',
      path,
      operationId,
      summary,
      description: EVENTS_DESCRIPTION,
      tag: 'Ingestion',
      auth: 'issuer',
      // Counted from the parsed body before validation: an array counts its items, anything else one.
      rateLimitEvents: (body: unknown) => (Array.isArray(body) ? body.length : 1),
      itemsFailAlone: true,
      documentedBody: {
        oneOf: [schema, { type: 'array', minItems: 1, maxItems: MAX_EVENTS_PER_BATCH, items: schema }],
      },
      responses: {
        204: { description: 'Every event accepted.' },
        200: { description: 'Some events accepted; the failures.', schema: failuresSchema },
        // Both shapes it can answer: per-event failures, or one error object for the request.
        400: {
          description:
            'No event accepted: the failures; or an error object when the request itself is refused (no body, not JSON, not an event or array, more than 1000 events).',
          schema: { oneOf: [failuresSchema, { $ref: '#/components/schemas/Error' }] },
        },
      },
      reasonCodes: {
        429: { backlog_full: "the issuer's events waiting to be processed have reached its backlog limit" },
      },
      async handle(ctx: Context) {
        const body = (ctx.request as { body?: unknown }).body;
        if (body === undefined) throw errors.validation('invalid_body', 'A JSON request body is required.');
        const events = batchOf(body);
        const issuer = issuerOf(ctx);
        await backlog().check(issuer);
        // One reading of the clock: a production issuer's events are queued at their receipt time.
        const queuedAt = deps.clock.now();
        const outcome = await ingestBatch(
          deps.db,
          issuer.id,
          kind,
          events,
          validators[kind],
          { receivedAt: new Date(queuedAt.getTime() + issuer.clockOffsetMs), queuedAt },
          unsafeItemsOf(ctx),
        );
        backlog().queued(issuer.id, outcome.handovers.length);
        if (outcome.handovers.length > 0) deps.handover?.enqueue(outcome.handovers);
        eventsIngested.inc({ kind, outcome: 'accepted' }, outcome.acceptedCount);
        eventsIngested.inc({ kind, outcome: 'failed' }, outcome.failures.length);
        if (outcome.failures.length === 0) {
          ctx.status = 204;
          return;
        }
        ctx.status = outcome.acceptedCount > 0 ? 200 : 400;
        ctx.body = outcome.failures;
      },
    });
  return [
    route('auth', '/api/v1/incoming-auth', 'ingestAuthorizations', 'Submit card authorization events', authEventSchema),
    route(
      'settled',
      '/api/v1/incoming-txn',
      'ingestSettledTransactions',
      'Submit settled transaction events',
      settledEventSchema,
    ),
  ];
}

function lagRoute(deps: AppDeps): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/api/v2/ingestion/lag',
    operationId: 'getIngestionLag',
    summary: "The calling issuer's events accepted and not yet processed",
    description:
      'Processing follows acceptance asynchronously and may lag under load: the service hands a bounded number of purchases ' +
      "to its workflow engine at once, and the rest wait, oldest first per issuer, issuers taken in turn. pendingEvents counts the issuer's " +
      'events accepted and not yet processed (waiting, or being processed); oldestPendingAgeSeconds is how long the oldest of them ' +
      'has waited (0 when none). When waitingEvents reaches waitingEventsLimit, ingestion answers 429 backlog_full until it ' +
      'falls below. An authorization waiting for its settlement is processed (previewed), not pending.',
    tag: 'Ingestion',
    auth: 'issuer',
    responses: { 200: { description: "The issuer's lag.", schema: lagSchema } },
    async handle(ctx) {
      const issuer = issuerOf(ctx);
      const limit = issuer.ingestionBacklogLimit ?? defaultBacklogLimit(deps);
      ctx.body = presentLag(await readBacklog(deps.db, issuer.id), limit, deps.clock.now());
    },
  });
}
