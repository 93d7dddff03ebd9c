// Which targeted offers a group sees (API.md, Targeted offers): only those it is enrolled in as
// treated. A group outside an offer's audience, or held out as its control, never sees the offer:
// not in a list, not by id. A group shown the catalogue before it was ever evaluated for a live
// targeted offer enrols in it first (decided as of its entry and stored, as its first purchase
// would): what it is shown and what it earns then never disagree.
import { Prisma, type Offer } from '../../prisma/generated/client';
import type { Db } from '../../prisma/client';
import { errors } from '../../core/errors';
import { enrol, isTargeted, type TargetedOffer } from '../../core/domain/enrolment';
import type { Audience } from '../../core/rules/audience';
import type { OfferMerchant } from './present';
import { requireVisibleOffer, visibleTo } from './scope';

/** Enrols the group in the live targeted offers it has no enrolment in yet (usually none). */
export async function enrolBeforeShowing(
  db: Db,
  issuerId: string,
  chgId: string,
  now: Date,
  merchantId?: string,
): Promise<void> {
  const pending = await db.offer.findMany({
    where: {
      merchant: visibleTo(issuerId),
      ...(merchantId ? { merchantId } : {}),
      status: 'active',
      startsAt: { lte: now },
      AND: [
        { OR: [{ endsAt: null }, { endsAt: { gt: now } }] },
        { OR: [{ activation: 'auto' }, { holdoutBps: { gt: 0 } }, { NOT: { audience: { equals: Prisma.DbNull } } }] },
      ],
      enrolments: { none: { chgId } },
    },
    select: { id: true, merchantId: true, startsAt: true, activation: true, audience: true, holdoutBps: true },
  });
  if (pending.length === 0) return;
  const group = await db.cardholderGroup.findFirst({
    where: { id: chgId, issuerId },
    select: { id: true, issuerId: true, createdAt: true, segments: true },
  });
  if (!group) return;
  const offers: TargetedOffer[] = pending.map((o) => ({
    ...o,
    activation: o.activation as TargetedOffer['activation'],
    audience: (o.audience ?? null) as Audience | null,
  }));
  await db.$transaction((tx) => enrol(tx, group, offers, now));
}

/** An offer the group is shown, or 404 exactly as for an offer that does not exist. */
export async function requireShownOffer(
  db: Db,
  p: { issuerId: string; chgId: string; offerId: string; merchantId?: string; now: Date },
): Promise<Offer & { merchant: OfferMerchant }> {
  const offer = await requireVisibleOffer(db, p.issuerId, p.offerId, p.merchantId);
  const terms = {
    activation: offer.activation as TargetedOffer['activation'],
    audience: (offer.audience ?? null) as Audience | null,
    holdoutBps: offer.holdoutBps,
  };
  if (!isTargeted(terms)) return offer;
  await enrolBeforeShowing(db, p.issuerId, p.chgId, p.now, offer.merchantId);
  const shown = await db.offerEnrolment.findFirst({
    where: { offerId: offer.id, chgId: p.chgId, arm: 'treated' },
    select: { offerId: true },
  });
  if (!shown)
    throw errors.notFound(
      'offer_not_found',
      `No offer ${p.offerId}${p.merchantId ? ` for merchant ${p.merchantId}` : ''}.`,
    );
  return offer;
}
