// Stores a batch of events in one statement: the good ones are stored, the bad ones are
// reported, and nothing else happens before the commit (API.md: "accepted" means durably
// stored). Idempotency is the unique (issuer, kind, external id) index:
// inserts skip existing keys, which are then compared with what was sent.
import { errors, type ApiError } from '../../core/errors';
import { newId } from '../../core/ids';
import type { Db } from '../../prisma/client';
import type { Prisma } from '../../prisma/generated/client';
import { toFieldErrors, type Validator } from '../validation';
import { classifyResubmission, fingerprint } from './fingerprint';
import { resolveCards } from './resolve';
import { insertNewEvents } from './insert-events';
import type { EventKind, IngestedEvent, SettledEvent } from './schemas';
import { lifecycleWorkflowId, signalFor, type HandoverItem } from '../../activities/handover';

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
}

const eventFailure = (reasonCode: string, message: string, fieldErrors?: Parameters<typeof errors.validation>[2]) =>
  errors.validation(reasonCode, message, fieldErrors);

export async function ingestBatch(
  db: Db,
  issuerId: string,
  kind: EventKind,
  raw: unknown[],
  validate: Validator<IngestedEvent>,
  now: Date,
): Promise<BatchOutcome> {
  const failures: Failure[] = [];
  const fail = (index: number, id: unknown, error: ApiError) =>
    failures.push({ index, id: typeof id === 'string' ? id : null, error: error.toBody() });

  const valid: Array<{ index: number; event: IngestedEvent }> = [];
  raw.forEach((item, index) => {
    if (validate(item)) valid.push({ index, event: item });
    else fail(index, (item as { id?: unknown } | null)?.id, eventFailure('invalid_event', 'The event is invalid.', toFieldErrors(validate.errors)));
  });

  const resolutions = await resolveCards(db, issuerId, valid.map((v) => v.event));
  const related = kind === 'settled' ? await loadRelatedPurchases(db, issuerId, valid.map((v) => v.event as SettledEvent)) : new Map();
  const candidates: Candidate[] = [];
  const firstInBatch = new Map<string, Candidate>();
  valid.forEach(({ index, event }, i) => {
    const resolution = resolutions[i];
    if (!resolution.ok) return fail(index, event.id, eventFailure(resolution.reason, messages[resolution.reason]));
    const print = fingerprint(kind, event);
    const earlier = firstInBatch.get(event.id);
    if (earlier) {
      const relation = classifyResubmission(kind, earlier.row, { fingerprint: print, state: event.state });
      if (relation === 'conflict') return fail(index, event.id, idConflict(event.id));
      if (relation === 'reversal') Object.assign(earlier.row, { state: 'reversed', stateChangedAt: now });
      return;
    }
    const settled = event as SettledEvent;
    let relatedEvent: { id: string; workflowId: string } | undefined;
    if (kind === 'settled' && settled.state === 'refunded') {
      relatedEvent = related.get(settled.relatedTransactionId!) ?? inBatchPurchase(firstInBatch, settled.relatedTransactionId!);
      if (!relatedEvent) {
        return fail(index, event.id, eventFailure('unknown_related_transaction', `No settled purchase ${settled.relatedTransactionId} to refund.`));
      }
    }
    const candidate: Candidate = {
      index,
      event,
      row: {
        id: newId(kind === 'auth' ? 'auth' : 'txn'),
        issuerId,
        kind,
        externalId: event.id,
        fingerprint: print,
        state: event.state,
        payload: event as unknown as Prisma.InputJsonValue,
        chgId: resolution.card.chgId,
        cardholderId: resolution.card.cardholderId,
        cardId: resolution.card.cardId,
        amountMinor: BigInt(event.amount),
        currency: event.currency,
        eventCreatedAt: new Date(event.createdAt),
        authorizationExternalId: settled.authorizationId ?? null,
        relatedExternalId: settled.relatedTransactionId ?? null,
        relatedEventId: relatedEvent?.id ?? null,
        workflowId: relatedEvent?.workflowId ?? lifecycleWorkflowId(issuerId, kind, event),
        receivedAt: now,
        // A declined authorization previews nothing: there is no purchase to hand over.
        handedOverAt: kind === 'auth' && event.state === 'declined' ? now : null,
        rewardStatus: kind === 'auth' && event.state === 'declined' ? 'not_matched' : 'pending',
      },
    };
    firstInBatch.set(event.id, candidate);
    candidates.push(candidate);
  });

  const handovers = await storeCandidates(db, issuerId, kind, candidates, now, (c, error) => fail(c.index, c.event.id, error));
  failures.sort((a, b) => a.index - b.index);
  return { acceptedCount: raw.length - failures.length, failures, handovers };
}

async function storeCandidates(
  db: Db,
  issuerId: string,
  kind: EventKind,
  candidates: Candidate[],
  now: Date,
  fail: (c: Candidate, error: ApiError) => void,
): Promise<HandoverItem[]> {
  if (candidates.length === 0) return [];
  // One statement stores the whole batch (and is atomic by itself): the usual batch of new
  // events costs no transaction round trips. Resubmissions are compared afterwards.
  const insertedIds = await insertNewEvents(db, candidates.map((c) => c.row));
  const handovers: HandoverItem[] = [];
  const existingKeys = candidates.filter((c) => !insertedIds.has(c.event.id)).map((c) => c.event.id);
  const existing = existingKeys.length ? await db.ingestedEvent.findMany({ where: { issuerId, kind, externalId: { in: existingKeys } } }) : [];
  const stored = new Map(existing.map((e) => [e.externalId, e]));
  for (const c of candidates) {
    if (insertedIds.has(c.event.id)) {
      if (c.row.handedOverAt === null) handovers.push(toHandover(c.row));
      continue;
    }
    const row = stored.get(c.event.id)!;
    const relation = classifyResubmission(kind, row, { fingerprint: c.row.fingerprint, state: c.row.state });
    if (relation === 'conflict') fail(c, idConflict(c.event.id));
    if (relation !== 'reversal') continue;
    // Conditional, so two concurrent reversals record one state change.
    const changed = await db.ingestedEvent.updateMany({
      where: { id: row.id, state: 'approved' },
      data: { state: 'reversed', stateChangedAt: now, handedOverAt: null },
    });
    if (changed.count === 1) handovers.push(toHandover({ ...row, state: 'reversed' }));
  }
  return handovers;
}

function toHandover(row: { id: string; issuerId: string; kind: string; state: string; workflowId: string; chgId: string; externalId: string }): HandoverItem {
  return {
    eventId: row.id,
    issuerId: row.issuerId,
    chgId: row.chgId,
    externalId: row.externalId,
    workflowId: row.workflowId,
    signal: signalFor(row.kind as EventKind, row.state),
  };
}

async function loadRelatedPurchases(db: Db, issuerId: string, events: SettledEvent[]) {
  const ids = [...new Set(events.filter((e) => e.state === 'refunded').map((e) => e.relatedTransactionId!))];
  if (ids.length === 0) return new Map<string, { id: string; workflowId: string }>();
  const rows = await db.ingestedEvent.findMany({
    where: { issuerId, kind: 'settled', state: 'settled', externalId: { in: ids } },
    select: { id: true, externalId: true, workflowId: true },
  });
  return new Map(rows.map((r) => [r.externalId, { id: r.id, workflowId: r.workflowId }]));
}

function inBatchPurchase(batch: Map<string, Candidate>, externalId: string) {
  const purchase = batch.get(externalId);
  if (!purchase || purchase.row.state !== 'settled') return undefined;
  return { id: purchase.row.id!, workflowId: purchase.row.workflowId };
}

function idConflict(id: string): ApiError {
  return errors.conflict('id_conflict', `Event ${id} was already received with other content.`);
}

const messages = {
  unknown_cardholder: 'No cardholder with that id for this issuer.',
  unknown_card: 'No card with that id for this issuer.',
  card_cardholder_mismatch: 'The card does not belong to the cardholder.',
} as const;
