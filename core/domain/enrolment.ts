// A group's enrolment in a targeted offer (API.md, Targeted offers): whether it is in the
// offer's audience and, when it is, its arm, decided once as of the group's entry into the offer
// (the later of the offer's start and the group's creation) and stored. The first decision stored
// is the only one: an enrolment run, a settlement and a preview racing for one group insert the
// same row or find it there (the primary key), so a restart, a replay or a PATCH of the audience
// never moves a group. The rules are core/rules/audience.ts and core/rules/holdout.ts.
import { Prisma } from '../../prisma/generated/client';
import { decideAudience, type Audience } from '../rules/audience';
import { holdoutArm, type HoldoutArm } from '../rules/holdout';
import type { SqlTx } from '../../prisma/sql-transaction';
import { factKey } from '../webhooks/fact-webhooks';
import { recordFactWebhooks } from './webhook-records';

export const OFFER_ACTIVATIONS = ['opt_in', 'auto'] as const;
export type OfferActivation = (typeof OFFER_ACTIVATIONS)[number];

/** What enrolment reads of an offer. */
export interface TargetedOffer {
  id: string;
  merchantId: string;
  startsAt: Date;
  activation: OfferActivation;
  audience: Audience | null;
  holdoutBps: number;
}

/** What enrolment reads of a group. */
export interface EnrollingGroup {
  id: string;
  issuerId: string;
  createdAt: Date;
  segments: readonly string[];
}

export interface Enrolment {
  inAudience: boolean;
  /** null when the group is not in the audience. */
  arm: HoldoutArm | null;
  enteredAt: Date;
  detail: string;
}

/** An offer every group that activates its merchant may earn, as before targeting: no enrolment. */
export function isTargeted(o: Pick<TargetedOffer, 'activation' | 'audience' | 'holdoutBps'>): boolean {
  return o.activation === 'auto' || o.audience !== null || o.holdoutBps > 0;
}

/** When the group entered the offer: the later of the offer's start and the group's creation. */
export function entryOf(offer: Pick<TargetedOffer, 'startsAt'>, group: Pick<EnrollingGroup, 'createdAt'>): Date {
  return offer.startsAt > group.createdAt ? offer.startsAt : group.createdAt;
}

/**
 * The decision for the group as of its entry, not stored. The merchant history is read as it
 * stood then: settled purchases before the entry, less the refunds dated before it.
 */
export async function decideEnrolment(tx: SqlTx, group: EnrollingGroup, offer: TargetedOffer): Promise<Enrolment> {
  const enteredAt = entryOf(offer, group);
  const lastPurchaseBeforeEntryAt = offer.audience?.merchantHistory
    ? await lastPurchaseBefore(tx, group, offer.merchantId, enteredAt)
    : null;
  const audience = decideAudience(offer.audience, {
    entryAt: enteredAt,
    segments: group.segments,
    lastPurchaseBeforeEntryAt,
  });
  const arm = audience.inAudience ? holdoutArm(offer.id, group.id, offer.holdoutBps) : null;
  const detail = arm === null ? audience.detail : `${audience.detail}; arm ${arm} (holdout ${offer.holdoutBps} bps)`;
  return { inAudience: audience.inAudience, arm, enteredAt, detail };
}

async function lastPurchaseBefore(
  tx: SqlTx,
  group: EnrollingGroup,
  merchantId: string,
  entry: Date,
): Promise<Date | null> {
  const [row] = await tx.$queryRaw<{ last: Date | null }[]>`
    SELECT max(p.event_created_at) AS last
      FROM ingested_event p
     WHERE p.issuer_id = ${group.issuerId} AND p.chg_id = ${group.id} AND p.merchant_id = ${merchantId}
       AND p.kind = 'settled' AND p.state = 'settled' AND p.event_created_at < ${entry}
       AND p.amount_minor > coalesce((SELECT sum(r.amount_minor) FROM ingested_event r
                                       WHERE r.related_event_id = p.id AND r.issuer_id = p.issuer_id AND r.kind = 'settled'
                                         AND r.state = 'refunded' AND r.currency = p.currency
                                         AND r.event_created_at < ${entry}), 0)`;
  return row?.last ?? null;
}

/** The group's stored enrolments in these offers. */
export async function storedEnrolments(
  tx: SqlTx,
  chgId: string,
  offerIds: readonly string[],
): Promise<Map<string, Enrolment>> {
  if (offerIds.length === 0) return new Map();
  const rows = await tx.$queryRaw<
    Array<{ offer_id: string; in_audience: boolean; arm: HoldoutArm | null; entered_at: Date; detail: string }>
  >`SELECT offer_id, in_audience, arm, entered_at, detail FROM offer_enrolment
     WHERE chg_id = ${chgId} AND offer_id IN (${Prisma.join(offerIds)})`;
  return new Map(
    rows.map((r) => [r.offer_id, { inAudience: r.in_audience, arm: r.arm, enteredAt: r.entered_at, detail: r.detail }]),
  );
}

/** The group's stored enrolments in these offers, and those not started by `at` or not yet decided. */
async function storedAndUndecided(tx: SqlTx, group: EnrollingGroup, offers: readonly TargetedOffer[], at: Date) {
  const stored = await storedEnrolments(
    tx,
    group.id,
    offers.map((o) => o.id),
  );
  return { stored, undecided: offers.filter((o) => !stored.has(o.id) && o.startsAt <= at) };
}

/**
 * The group's enrolment in each offer: the stored one, else decided now and stored, unless the
 * offer has not started by `at` (its audience is decided at its start, not before). A row another
 * process stored first wins: it is read back, never overwritten.
 */
export async function enrol(
  tx: SqlTx,
  group: EnrollingGroup,
  offers: readonly TargetedOffer[],
  at: Date,
): Promise<Map<string, Enrolment>> {
  const { stored, undecided } = await storedAndUndecided(tx, group, offers, at);
  if (undecided.length === 0) return stored;
  for (const offer of undecided) await store(tx, group, offer, await decideEnrolment(tx, group, offer), at);
  return (await storedAndUndecided(tx, group, offers, at)).stored;
}

/** Inserts the decision unless a row is there; whoever inserts it records offer_available. */
async function store(tx: SqlTx, group: EnrollingGroup, offer: TargetedOffer, e: Enrolment, at: Date): Promise<void> {
  const inserted = await tx.$queryRaw<Array<{ offer_id: string }>>`
    INSERT INTO offer_enrolment (offer_id, chg_id, issuer_id, in_audience, arm, entered_at, detail, created_at)
    VALUES (${offer.id}, ${group.id}, ${group.issuerId}, ${e.inAudience}, ${e.arm}, ${e.enteredAt}, ${e.detail}, now())
    ON CONFLICT (offer_id, chg_id) DO NOTHING
    RETURNING offer_id`;
  // Told once, by whoever stored the enrolment: an auto offer now qualifies the group unasked.
  if (inserted.length === 1 && e.arm === 'treated' && offer.activation === 'auto')
    await recordFactWebhooks(tx, [
      {
        issuerId: group.issuerId,
        type: 'offer_available',
        factKey: factKey.offerAvailable(offer.id, group.id),
        sourceId: offer.id,
        data: { chgId: group.id, offerId: offer.id, merchantId: offer.merchantId },
        at,
      },
    ]);
}

/** The enrolments a read shows: stored ones, and for the rest the decision as it would be stored. */
export async function enrolmentsForRead(
  tx: SqlTx,
  group: EnrollingGroup,
  offers: readonly TargetedOffer[],
  at: Date,
): Promise<Map<string, Enrolment>> {
  const { stored, undecided } = await storedAndUndecided(tx, group, offers, at);
  for (const offer of undecided) stored.set(offer.id, await decideEnrolment(tx, group, offer));
  return stored;
}
