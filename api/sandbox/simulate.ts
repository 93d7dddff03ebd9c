// Forced outcomes for sandbox issuers: one call plays a purchase's events
// through the normal ingestion path — the same validation, storage and hand-over to its
// TransactionLifecycle as POST /api/v1/incoming-auth and /incoming-txn — so what follows is
// the real behaviour: previews, settlement postings, clawbacks, webhooks, lapses.
// Events are ingested one step at a time, and each step is handed over before the next is
// stored, so the lifecycle receives them in the order a card network would send them.
import { randomUUID } from 'node:crypto';
import type { Db } from '../../prisma/client';
import { ApiError, errors } from '../../core/errors';
import type { Handover } from '../ingestion/handover-queue';
import { handOver, type HandoverItem } from '../../core/domain/handover';
import type { WorkflowEngine } from '../../core/workflow-engine';
import { compileBody } from '../validation';
import { ingestBatch, type Failure, type ReceiptTimes } from '../ingestion/store';
import { authEventSchema, settledEventSchema, type EventKind, type IngestedEvent } from '../ingestion/schemas';
import type { SimulateBody, SimulatedOutcome } from './schemas';

const validators = {
  auth: compileBody<IngestedEvent>(authEventSchema),
  settled: compileBody<IngestedEvent>(settledEventSchema),
};

const DEFAULT_MCC = '5999';

interface Card {
  cardId: string;
  cardholderId: string;
  chgId: string;
  last4: string;
  network: IngestedEvent['network'];
}

/** One event of the plan: which endpoint it goes to, and the event as an issuer would send it. */
interface Step {
  kind: EventKind;
  event: IngestedEvent;
}

export interface SimulatedEvent {
  endpoint: '/api/v1/incoming-auth' | '/api/v1/incoming-txn';
  id: string;
  state: IngestedEvent['state'];
  eventId: string;
}

export interface SimulatedPurchase {
  outcome: SimulatedOutcome;
  chgId: string;
  authorizationId: string;
  transactionId: string | null;
  refundTransactionId: string | null;
  createdAt: string;
  events: SimulatedEvent[];
}

export interface SimulateDeps {
  db: Db;
  temporal?: WorkflowEngine;
  handover?: Handover;
}

/** The card that pays: our card_ id, or the issuer's id of an active card. */
async function findCard(db: Db, issuerId: string, cardId: string): Promise<Card> {
  const [card] = await db.$queryRaw<Card[]>`
    SELECT c.id AS "cardId", c.cardholder_id AS "cardholderId", c.chg_id AS "chgId", c.last4, c.network
      FROM card c
     WHERE c.issuer_id = ${issuerId} AND (c.id = ${cardId} OR (c.external_id = ${cardId} AND c.status = 'active'))
     ORDER BY c.status = 'active' DESC, c.created_at DESC LIMIT 1`;
  if (!card) throw errors.notFound('card_not_found', `No card ${cardId}.`);
  return card;
}

/** The events, in order, that produce `outcome`. */
export function planEvents(body: SimulateBody, card: Card, at: Date): Step[][] {
  const id = `sandbox-${randomUUID()}`;
  const base = {
    amount: body.amount,
    currency: 'usd',
    merchantDescriptor: 'SANDBOX SIMULATION',
    mcc: body.mcc ?? DEFAULT_MCC,
    createdAt: at.toISOString(),
    cardLast4: card.last4,
    network: card.network,
    cardholderId: card.cardholderId,
    cardId: card.cardId,
    authMethod: 'contactless' as const,
    merchantId: body.merchantId,
  };
  const auth = (state: 'approved' | 'declined' | 'reversed'): Step => ({ kind: 'auth', event: { ...base, id, state } });
  const settlement: Step = {
    kind: 'settled',
    event: { ...base, id, state: 'settled', settledAt: at.toISOString(), authorizationId: id },
  };
  switch (body.outcome) {
    case 'authorized':
      return [[auth('approved')]];
    case 'declined':
      return [[auth('declined')]];
    case 'reversed':
      return [[auth('approved')], [auth('reversed')]];
    case 'settled':
      return [[auth('approved')], [settlement]];
    case 'refunded': {
      const refundAmount = body.refundAmount ?? body.amount;
      const refund: Step = {
        kind: 'settled',
        event: {
          ...base,
          id: `${id}-refund`,
          amount: refundAmount,
          state: 'refunded',
          settledAt: at.toISOString(),
          relatedTransactionId: id,
        },
      };
      return [[auth('approved')], [settlement], [refund]];
    }
  }
}

/** An event the service refused (it should not happen: the plan is built from the card). */
function refusal(failure: Failure): ApiError {
  return new ApiError('validation_failed', `The simulated event was refused: ${failure.error.message}`, {
    reasonCode: failure.error.reasonCode ?? 'invalid_event',
    details: failure.error.details,
  });
}

/** Hands the step's events to their lifecycle now when the engine is at hand, else through the queue. */
async function handStepOver(deps: SimulateDeps, items: HandoverItem[]): Promise<void> {
  if (items.length === 0) return;
  if (deps.temporal) {
    // A failure leaves the events un-handed in the database, where the sweeper finds them.
    await handOver({ temporal: deps.temporal, db: deps.db }, items);
    return;
  }
  deps.handover?.enqueue(items);
}

export async function simulatePurchase(
  deps: SimulateDeps,
  issuerId: string,
  body: SimulateBody,
  times: ReceiptTimes,
): Promise<SimulatedPurchase> {
  const at = times.receivedAt;
  if (body.refundAmount !== undefined && (body.outcome !== 'refunded' || body.refundAmount > body.amount)) {
    throw errors.validation('invalid_body', 'refundAmount is only for the refunded outcome, and at most amount.', [
      { path: '/refundAmount', message: 'is not allowed here' },
    ]);
  }
  const card = await findCard(deps.db, issuerId, body.cardId);
  const events: SimulatedEvent[] = [];
  for (const step of planEvents(body, card, at)) {
    for (const { kind, event } of step) {
      const outcome = await ingestBatch(deps.db, issuerId, kind, [event], validators[kind], times);
      if (outcome.failures.length > 0) throw refusal(outcome.failures[0]);
      await handStepOver(deps, outcome.handovers);
      const eventId = await storedEventId(deps.db, issuerId, kind, event.id);
      events.push({
        endpoint: kind === 'auth' ? '/api/v1/incoming-auth' : '/api/v1/incoming-txn',
        id: event.id,
        state: event.state,
        eventId,
      });
    }
  }
  const find = (state: string) => events.find((e) => e.state === state)?.eventId ?? null;
  return {
    outcome: body.outcome,
    chgId: card.chgId,
    authorizationId: events[0].eventId,
    transactionId: find('settled'),
    refundTransactionId: find('refunded'),
    createdAt: at.toISOString(),
    events,
  };
}

async function storedEventId(db: Db, issuerId: string, kind: EventKind, externalId: string): Promise<string> {
  const row = await db.ingestedEvent.findFirst({ where: { issuerId, kind, externalId }, select: { id: true } });
  if (!row) throw new Error(`the simulated ${kind} event ${externalId} was accepted but is not stored`);
  return row.id;
}
