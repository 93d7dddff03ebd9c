// Stores a batch of events in one statement: the good ones are stored, the bad ones are
// reported, and nothing else happens before the commit (API.md: "accepted" means durably
// stored). Idempotency is the unique (issuer, kind, external id) index:
// inserts skip existing keys, which are then compared with what was sent.
import { currentTraceparent } from '../../core/tracing';
import { errors, type ApiError } from '../../core/errors';
import { newId } from '../../core/ids';
import type { Db } from '../../prisma/client';
import type { Prisma } from '../../prisma/generated/client';
import { toFieldErrors, type Validator } from '../validation';
import { classifyResubmission, fingerprint } from './fingerprint';
import { loadCardDirectory, type ResolvedCard } from './resolve';
import { insertNewEvents, reverseAuthorization } from './insert-events';
import { eventFailure, refusalOf, type EventLinks } from './consistency';
import type { UnsafeJson } from '../middleware/json-body';
import { eventDatesOutsideWindow } from './event-window';
import { holdsCardNumber } from '../../core/rules/card-numbers';
import { toInstant } from '../../core/timestamp';
import {
  EVENT_FAILURE_REASONS,
  settledRuleMessages,
  type EventKind,
  type IngestedEvent,
  type SettledEvent,
} from './schemas';
import { lifecycleWorkflowId, signalFor, type HandoverItem } from '../../core/domain/handover';

export interface Failure {
  index: number;
  id: string | null;
  error: ReturnType<ApiError['toBody']>;
}

export interface BatchOutcome {
  acceptedCount: number;
  failures: Failure[];
  handovers: HandoverItem[];
}

interface Candidate {
  index: number;
  event: IngestedEvent;
  row: Prisma.IngestedEventCreateManyInput;
  /**
   * Set when the event's data disagree (consistency.ts). The event is then not inserted, but
   * an event already stored under its id still decides, as for any re-submission: an event
   * accepted before its card changed (or before the rule) is answered as it always was.
   */
  refusal?: ApiError;
}

/** The settled purchase a refund names. */
interface Purchase {
  id: string;
  workflowId: string;
  chgId: string;
  currency: string;
}

/** When a batch is received: on the issuer's clock, and in real time. */
export interface ReceiptTimes {
  /** The issuer's now (a sandbox issuer's clock may be ahead): the events' receipt, date window and state changes. */
  receivedAt: Date;
  /** The same instant in real time: when the events join the hand-over queue, whose ages are real time. */
  queuedAt: Date;
}

export async function ingestBatch(
  db: Db,
  issuerId: string,
  kind: EventKind,
  raw: unknown[],
  validate: Validator<IngestedEvent>,
  at: ReceiptTimes,
  unsafe: ReadonlyMap<number, UnsafeJson> = new Map(),
): Promise<BatchOutcome> {
  const now = at.receivedAt;
  const failures: Failure[] = [];
  // An id holding a card number is not echoed: the failure says where it was, never what.
  const fail = (index: number, id: unknown, error: ApiError) =>
    failures.push({ index, id: typeof id === 'string' && !holdsCardNumber(id) ? id : null, error: error.toBody() });

  const valid = validEvents(raw, kind, { validate, unsafe }, now, fail);

  const directory = await loadCardDirectory(
    db,
    issuerId,
    valid.map((v) => v.event),
  );
  const related =
    kind === 'settled'
      ? await loadRelatedPurchases(
          db,
          issuerId,
          valid.map((v) => v.event as SettledEvent),
        )
      : new Map<string, Purchase>();
  const counterparts = await loadCounterparts(
    db,
    issuerId,
    kind,
    valid.map((v) => v.event),
  );
  const candidates: Candidate[] = [];
  const firstInBatch = new Map<string, Candidate>();
  valid.forEach(({ index, event }) => {
    const settled = event as SettledEvent;
    const refund = kind === 'settled' && settled.state === 'refunded';
    const purchase = refund
      ? (related.get(settled.relatedTransactionId!) ?? inBatchPurchase(firstInBatch, settled.relatedTransactionId!))
      : undefined;
    // A refund looks for its card in its purchase's group first (the cardholder may have moved since).
    const resolution = directory.resolve(event, purchase?.chgId);
    if (!resolution.ok)
      return fail(index, event.id, eventFailure(resolution.reason, EVENT_FAILURE_REASONS[resolution.reason]));
    const print = fingerprint(kind, event);
    const earlier = firstInBatch.get(event.id);
    if (earlier) {
      const relation = classifyResubmission(kind, earlier.row, { fingerprint: print, state: event.state });
      if (relation === 'conflict') return fail(index, event.id, idConflict(event.id));
      if (relation === 'reversal') Object.assign(earlier.row, { state: 'reversed', stateChangedAt: now });
      return;
    }
    if (refund && !purchase) {
      return fail(
        index,
        event.id,
        eventFailure('unknown_related_transaction', `No settled purchase ${settled.relatedTransactionId} to refund.`),
      );
    }
    const candidate: Candidate = {
      index,
      event,
      refusal: refusalOf(event, resolution.card, { purchase, counterpart: counterparts(event) }),
      row: newRow(issuerId, kind, event, print, resolution.card, purchase, now),
    };
    // A refused copy is no earlier copy for the rest of the batch: each copy answers for itself.
    if (!candidate.refusal) firstInBatch.set(event.id, candidate);
    candidates.push(candidate);
  });

  const handovers = await storeCandidates(db, issuerId, kind, candidates, at, (c, error) =>
    fail(c.index, c.event.id, error),
  );
  failures.sort((a, b) => a.index - b.index);
  return { acceptedCount: raw.length - failures.length, failures, handovers };
}

/** The events that pass their schema and date window; each other one is a failure of its own. */
function validEvents(
  raw: unknown[],
  kind: EventKind,
  screen: { validate: Validator<IngestedEvent>; unsafe: ReadonlyMap<number, UnsafeJson> },
  now: Date,
  fail: (index: number, id: unknown, error: ApiError) => void,
): Array<{ index: number; event: IngestedEvent }> {
  const ruleMessages = kind === 'settled' ? settledRuleMessages : {};
  const valid: Array<{ index: number; event: IngestedEvent }> = [];
  const { validate } = screen;
  raw.forEach((item, index) => {
    // Screened before the schema: a string PostgreSQL cannot store fails its event alone.
    const unsafe = screen.unsafe.get(index);
    if (unsafe) {
      return fail(
        index,
        (item as { id?: unknown } | null)?.id,
        unsafe.reasonCode === 'pan_detected'
          ? errors.panDetected(unsafe.path)
          : eventFailure('invalid_event', unsafe.message, [{ path: unsafe.path, message: unsafe.problem }]),
      );
    }
    if (!validate(item)) {
      return fail(
        index,
        (item as { id?: unknown } | null)?.id,
        eventFailure('invalid_event', 'The event is invalid.', toFieldErrors(validate.errors, '', ruleMessages)),
      );
    }
    const outside = eventDatesOutsideWindow(item, now);
    if (outside.length > 0)
      return fail(
        index,
        item.id,
        eventFailure('invalid_event', 'The event is dated outside the window the service accepts.', outside),
      );
    valid.push({ index, event: item });
  });

  return valid;
}

/**
 * The event as kept: the issuer's references to the card (its ids, its last four digits) give
 * way to our ids, which the row's columns hold too. What the purchase is (amount, merchant,
 * dates) stays as sent; an erasure then has nothing of the card to find in it (decision 0055).
 */
function storedPayload(event: IngestedEvent, card: ResolvedCard): Prisma.InputJsonValue {
  const { cardLast4: _sent, ...rest } = event as IngestedEvent & { cardLast4?: string };
  return { ...rest, cardholderId: card.cardholderId, cardId: card.cardId } as unknown as Prisma.InputJsonValue;
}

function newRow(
  issuerId: string,
  kind: EventKind,
  event: IngestedEvent,
  print: string,
  card: ResolvedCard,
  purchase: Purchase | undefined,
  now: Date,
): Prisma.IngestedEventCreateManyInput {
  const settled = event as SettledEvent;
  return {
    id: newId(kind === 'auth' ? 'auth' : 'txn'),
    issuerId,
    kind,
    externalId: event.id,
    fingerprint: print,
    state: event.state,
    payload: storedPayload(event, card),
    chgId: card.chgId,
    cardholderId: card.cardholderId,
    cardId: card.cardId,
    amountMinor: BigInt(event.amount),
    currency: event.currency,
    eventCreatedAt: toInstant(event.createdAt),
    authorizationExternalId: settled.authorizationId ?? null,
    relatedExternalId: settled.relatedTransactionId ?? null,
    relatedEventId: purchase?.id ?? null,
    workflowId: purchase?.workflowId ?? lifecycleWorkflowId(issuerId, kind, event),
    receivedAt: now,
    // A declined authorization previews nothing: there is no purchase to hand over (only
    // pending events are queued, api/ingestion/insert-events.ts).
    rewardStatus: kind === 'auth' && event.state === 'declined' ? 'not_matched' : 'pending',
  };
}

async function storeCandidates(
  db: Db,
  issuerId: string,
  kind: EventKind,
  candidates: Candidate[],
  at: ReceiptTimes,
  fail: (c: Candidate, error: ApiError) => void,
): Promise<HandoverItem[]> {
  if (candidates.length === 0) return [];
  const { receivedAt: now, queuedAt } = at;
  // One statement stores the whole batch (and is atomic by itself): the usual batch of new
  // events costs no transaction round trips. Resubmissions are compared afterwards.
  const accepted = candidates.filter((c) => !c.refusal);
  const traceparent = currentTraceparent();
  const insertedIds =
    accepted.length > 0
      ? await insertNewEvents(
          db,
          { issuerId, kind, receivedAt: now, queuedAt, traceparent },
          accepted.map((c) => c.row),
        )
      : new Set<string>();
  const insertedNow = new Map(accepted.filter((c) => insertedIds.has(c.event.id)).map((c) => [c.event.id, c.row]));
  const handovers: HandoverItem[] = [];
  const existingKeys = [...new Set(candidates.filter((c) => !insertedNow.has(c.event.id)).map((c) => c.event.id))];
  const existing = existingKeys.length
    ? await db.ingestedEvent.findMany({ where: { issuerId, kind, externalId: { in: existingKeys } } })
    : [];
  const stored = new Map<string, StoredEvent>(existing.map((e) => [e.externalId, e]));
  for (const c of candidates) {
    if (!c.refusal && insertedNow.has(c.event.id)) {
      if (c.row.rewardStatus === 'pending') handovers.push({ ...toHandover(c.row), traceparent });
      continue;
    }
    // A refused copy is compared with what is stored under its id, even by this very batch.
    const row: StoredEvent | undefined =
      stored.get(c.event.id) ?? (insertedNow.get(c.event.id) as StoredEvent | undefined);
    if (!row) {
      // Neither inserted nor stored before: only a refused event can get here.
      if (!c.refusal) throw new Error(`event ${c.event.id} was neither inserted nor found`);
      fail(c, c.refusal);
      continue;
    }
    const relation = classifyResubmission(kind, row, { fingerprint: c.row.fingerprint, state: c.row.state });
    if (relation === 'conflict') fail(c, idConflict(c.event.id));
    if (relation !== 'reversal') continue;
    if (await reverseAuthorization(db, row.id, now, queuedAt))
      handovers.push(toHandover({ ...row, state: 'reversed' }));
  }
  return handovers;
}

type StoredEvent = Parameters<typeof toHandover>[0] & { fingerprint: string };

function toHandover(row: {
  id: string;
  issuerId: string;
  kind: string;
  state: string;
  workflowId: string;
  chgId: string;
  externalId: string;
}): HandoverItem {
  return {
    eventId: row.id,
    issuerId: row.issuerId,
    chgId: row.chgId,
    externalId: row.externalId,
    workflowId: row.workflowId,
    signal: signalFor(row.kind as EventKind, row.state),
  };
}

async function loadRelatedPurchases(db: Db, issuerId: string, events: SettledEvent[]): Promise<Map<string, Purchase>> {
  const ids = [...new Set(events.filter((e) => e.state === 'refunded').map((e) => e.relatedTransactionId!))];
  if (ids.length === 0) return new Map();
  const rows = await db.ingestedEvent.findMany({
    where: { issuerId, kind: 'settled', state: 'settled', externalId: { in: ids } },
    select: { id: true, externalId: true, workflowId: true, chgId: true, currency: true },
  });
  return new Map(rows.map((r) => [r.externalId, r]));
}

function inBatchPurchase(batch: Map<string, Candidate>, externalId: string): Purchase | undefined {
  const purchase = batch.get(externalId);
  if (!purchase || purchase.row.state !== 'settled') return undefined;
  const { row } = purchase;
  return { id: row.id!, workflowId: row.workflowId, chgId: row.chgId, currency: row.currency };
}

type Counterpart = NonNullable<EventLinks['counterpart']>;

/**
 * The other half of each purchase already stored, whose currency the event must share: a
 * settlement's authorization (by the id it names), or an authorization's settlement (one that
 * arrived first and names it: the purchase's workflow id is the authorization's id). One
 * indexed read per batch, and none for settlements that name no authorization.
 */
async function loadCounterparts(
  db: Db,
  issuerId: string,
  kind: EventKind,
  events: IngestedEvent[],
): Promise<(event: IngestedEvent) => Counterpart | undefined> {
  if (kind === 'settled') {
    const named = (e: IngestedEvent) => (e.state === 'settled' ? (e as SettledEvent).authorizationId : undefined);
    const ids = [...new Set(events.map(named).filter((id): id is string => id !== undefined))];
    if (ids.length === 0) return () => undefined;
    const rows = await db.ingestedEvent.findMany({
      where: { issuerId, kind: 'auth', externalId: { in: ids } },
      select: { externalId: true, currency: true },
    });
    const byId = new Map(rows.map((r) => [r.externalId, r.currency]));
    return (e) => counterpart('authorization', named(e), byId);
  }
  const workflowIds = [...new Set(events.map((e) => lifecycleWorkflowId(issuerId, 'auth', e)))];
  if (workflowIds.length === 0) return () => undefined;
  const rows = await db.ingestedEvent.findMany({
    where: { workflowId: { in: workflowIds }, issuerId, kind: 'settled', state: 'settled' },
    select: { authorizationExternalId: true, currency: true },
  });
  const byId = new Map(rows.map((r) => [r.authorizationExternalId ?? '', r.currency]));
  return (e) => counterpart('settlement', e.id, byId);
}

function counterpart(
  kind: Counterpart['kind'],
  externalId: string | undefined,
  currencies: Map<string, string>,
): Counterpart | undefined {
  const currency = externalId === undefined ? undefined : currencies.get(externalId);
  return currency === undefined ? undefined : { kind, externalId: externalId!, currency };
}

function idConflict(id: string): ApiError {
  return errors.conflict('id_conflict', `Event ${id} was already received with other content.`);
}

/** An issuer's events accepted and not yet processed: waiting for their hand-over, and in flight. */
export interface IssuerBacklog {
  waiting: number;
  inFlight: number;
  /** When the oldest of them was accepted (or reversed); null when there is none. */
  oldestQueuedAt: Date | null;
}

/**
 * The issuer's backlog as GET /api/v2/ingestion/lag reports it: its rows of the hand-over queue,
 * waiting or admitted and not yet processed (a processed row stays only until its workflow has
 * gone idle), counted in full through their indexes.
 */
export async function readBacklog(db: Db, issuerId: string): Promise<IssuerBacklog> {
  const [row] = await db.$queryRaw<Array<{ waiting: number; in_flight: number; oldest: Date | null }>>`
    WITH waiting AS (
      SELECT count(*)::int AS n, min(queued_at) AS oldest FROM handover_pending
       WHERE issuer_id = ${issuerId} AND admitted_at IS NULL
    ), in_flight AS (
      SELECT count(*)::int AS n, min(queued_at) AS oldest FROM handover_pending
       WHERE admitted_at IS NOT NULL AND processed_at IS NULL AND issuer_id = ${issuerId}
    )
    SELECT w.n AS waiting, f.n AS in_flight, least(w.oldest, f.oldest) AS oldest FROM waiting w, in_flight f`;
  return { waiting: row.waiting, inFlight: row.in_flight, oldestQueuedAt: row.oldest };
}
