// Sandbox simulation (API.md "Sandbox issuers only"; docs/decisions/0011-sandbox-simulation.md):
// a test clock per sandbox issuer and purchases with a forced outcome. A production issuer's token is refused
// with 403 sandbox_only: the route exists for everyone, the issuer's environment is no secret
// to itself, and a 404 would send an integrator looking for a typo.
import type { Context } from 'koa';
import { defineRoute, type RouteSpec } from '../route';
import { issuerOf } from '../middleware/auth';
import { errors } from '../../core/errors';
import type { AppDeps } from '../deps';
import { shiftedNow } from './issuer-clock';
import { moveClock, readClockOffsetMs, signalClock, startIssuerExpiry, waitingPurchases } from './clock';
import { simulatePurchase } from './simulate';
import {
  MAX_ADVANCE_DAYS,
  MAX_ADVANCE_MS,
  clockAdvanceBodySchema,
  sandboxClockAdvanceSchema,
  sandboxClockSchema,
  simulateBodySchema,
  simulatedPurchaseSchema,
} from './schemas';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

const forbidden = {
  description: 'The token belongs to a production issuer: reasonCode sandbox_only.',
  schema: { $ref: '#/components/schemas/Error' },
};

/** The calling issuer, which must be a sandbox issuer. */
function sandboxIssuerId(ctx: Context): string {
  const issuer = issuerOf(ctx);
  if (issuer.environment !== 'sandbox') throw errors.sandboxOnly();
  return issuer.id;
}

function advanceMs(body: { days?: number; hours?: number }): number {
  const ms = (body.days ?? 0) * DAY_MS + (body.hours ?? 0) * HOUR_MS;
  if (ms <= 0 || ms > MAX_ADVANCE_MS) {
    throw errors.validation(
      'invalid_body',
      `Advance by more than 0 and at most ${MAX_ADVANCE_DAYS} days (days and hours together).`,
      [{ path: '/days', message: `days + hours/24 must be more than 0 and at most ${MAX_ADVANCE_DAYS}` }],
    );
  }
  return ms;
}

const tag = 'Sandbox';
const requireTemporal = (deps: AppDeps) => {
  if (!deps.temporal)
    throw errors.unavailable('workflow_engine_unavailable', 'The workflow engine is not configured; try again later.');
  return deps.temporal;
};

export function sandboxRoutes(deps: AppDeps): RouteSpec[] {
  return [getSandboxClockRoute(deps), advanceSandboxClockRoute(deps), simulateSandboxTransactionRoute(deps)];
}

function getSandboxClockRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'get',
    path: '/api/v2/sandbox/clock',
    operationId: 'getSandboxClock',
    summary: "The sandbox issuer's test clock",
    description:
      "The issuer's simulated now: every balance, availability, expiry, offer window and event-date check of the issuer reads it.",
    tag,
    auth: 'issuer',
    responses: { 200: { description: 'The clock.', schema: sandboxClockSchema }, 403: forbidden },
    async handle(ctx) {
      const issuerId = sandboxIssuerId(ctx);
      const clockOffsetMs = await readClockOffsetMs(db, issuerId);
      ctx.body = { now: shiftedNow(clock, clockOffsetMs).toISOString(), clockOffsetMs };
    },
  });
}

function advanceSandboxClockRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'post',
    path: '/api/v2/sandbox/clock/advance',
    operationId: 'advanceSandboxClock',
    summary: "Moves the sandbox issuer's test clock forward",
    description:
      'For this issuer only: branded balance becomes available and expires on the new now (reads at once; grants past expiry move ' +
      'to breakage by an expiry run started here, within seconds); authorizations waiting for their settlement re-evaluate ' +
      'SETTLEMENT_TIMEOUT on the new now and lapse if it has passed. Events the issuer sends later are dated on its clock ' +
      '(createdAt within 400 days before and 1 day after the simulated now). The clock never goes back (at most 20 years ahead).',
    tag,
    auth: 'issuer',
    body: clockAdvanceBodySchema,
    responses: { 200: { description: 'The moved clock.', schema: sandboxClockAdvanceSchema }, 403: forbidden },
    errorStatuses: [503],
    reasonCodes: { 400: { invalid_body: 'days + hours / 24 is not above 0 and at most 366' } },
    async handle(ctx, { body }) {
      const issuerId = sandboxIssuerId(ctx);
      const byMs = advanceMs(body);
      const temporal = requireTemporal(deps);
      const clockOffsetMs = await moveClock(db, issuerId, byMs);
      deps.tokenCache?.evictIssuer(issuerId); // this process at once, the others on the NOTIFY
      const notified = await signalClock(temporal, await waitingPurchases(db, issuerId), clockOffsetMs, deps.logger);
      const expiryWorkflowId = await startIssuerExpiry(temporal, issuerId, clockOffsetMs);
      ctx.body = {
        now: shiftedNow(clock, clockOffsetMs).toISOString(),
        clockOffsetMs,
        advancedByMs: byMs,
        waitingAuthorizationsNotified: notified,
        expiryWorkflowId,
      };
    },
  });
}

function simulateSandboxTransactionRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'post',
    path: '/api/v2/sandbox/transactions',
    operationId: 'simulateSandboxTransaction',
    summary: 'Plays a purchase with a forced outcome through ingestion',
    description:
      "Builds the events of the outcome from the card (its cardholder, last4 and network), dates them at the issuer's simulated " +
      'now, and ingests them through the same path as /api/v1/incoming-auth and /api/v1/incoming-txn, one step after the other ' +
      '(an authorization is handed to its lifecycle before its reversal or settlement is stored). Processing is asynchronous: ' +
      'read the outcome with reward-detail (settled, refunded) or watch the webhooks.',
    tag,
    auth: 'issuer',
    body: simulateBodySchema,
    responses: { 201: { description: 'The events ingested.', schema: simulatedPurchaseSchema }, 403: forbidden },
    errorStatuses: [404],
    reasonCodes: {
      400: {
        invalid_body: 'refundAmount given without the refunded outcome, or above amount',
        invalid_event: 'the built event fails as it would on ingestion (its reasonCode is the per-event one)',
      },
    },
    async handle(ctx, { body }) {
      const issuer = issuerOf(ctx);
      sandboxIssuerId(ctx);
      const clockOffsetMs = await readClockOffsetMs(db, issuer.id);
      // Dated on the issuer's clock, queued in real time (api/ingestion/insert-events.ts).
      const queuedAt = clock.now();
      const receivedAt = new Date(queuedAt.getTime() + clockOffsetMs);
      ctx.status = 201;
      ctx.body = await simulatePurchase({ db, temporal: deps.temporal, handover: deps.handover }, issuer.id, body, {
        receivedAt,
        queuedAt,
      });
    },
  });
}
