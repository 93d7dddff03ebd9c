// Database filters for the issuer's offer list. statusWhere is offerStatusAt
// (core/rules/offer-status.ts) restated in SQL terms, and typeWhere the effective branded
// rate (core/rules/branded-rate.ts), so a filtered page holds exactly the offers the
// presented `status` and rates say (present.ts, presentIssuerOffer); keep them in step.
import type { Prisma } from '../../prisma/generated/client';
import type { OfferStatus } from '../../core/rules/offer-status';
import { cursorDate, decodeCursor } from '../pagination';

export interface OfferFilters {
  merchantId?: string;
  status?: OfferStatus;
  type?: 'cashback' | 'branded';
  cursor?: string;
}

/** An offer is live only while it and its merchant are active; otherwise it shows as ended. */
export function statusWhere(status: OfferStatus, now: Date): Prisma.OfferWhereInput {
  switch (status) {
    case 'scheduled':
      return {
        status: 'active',
        merchant: { status: 'active' },
        startsAt: { gt: now },
        OR: [{ endsAt: null }, { endsAt: { gt: now } }],
      };
    case 'active':
      return {
        status: 'active',
        merchant: { status: 'active' },
        startsAt: { lte: now },
        OR: [{ endsAt: null }, { endsAt: { gt: now } }],
      };
    case 'ended':
      return { OR: [{ status: 'inactive' }, { merchant: { status: 'inactive' } }, { endsAt: { lte: now } }] };
  }
}

/**
 * Branded offers are those that pay branded balance here: a rate, a merchant with branded
 * balance, and an expiry beyond the issuer's delay (a merchant's own delay is always shorter
 * than its expiry: store.ts refuses anything else).
 */
export function typeWhere(type: 'cashback' | 'branded', issuerDelayDays: number): Prisma.OfferWhereInput {
  return type === 'cashback'
    ? { cashbackRateBps: { gt: 0 } }
    : { brandedRateBps: { gt: 0 }, merchant: { brandedEnabled: true, brandedExpiryDays: { gt: issuerDelayDays } } };
}

/** Offers sort by startsAt then id; the cursor holds the last one served. */
export function offerListWhere(
  merchantScope: Prisma.MerchantWhereInput,
  filters: OfferFilters,
  now: Date,
  issuerDelayDays: number,
): Prisma.OfferWhereInput {
  const and: Prisma.OfferWhereInput[] = [{ merchant: merchantScope }];
  if (filters.merchantId) and.push({ merchantId: filters.merchantId });
  if (filters.status) and.push(statusWhere(filters.status, now));
  if (filters.type) and.push(typeWhere(filters.type, issuerDelayDays));
  const after = decodeCursor(filters.cursor, 2);
  if (after) {
    const startsAt = cursorDate(after[0]);
    and.push({ OR: [{ startsAt: { gt: startsAt } }, { startsAt, id: { gt: String(after[1]) } }] });
  }
  return { AND: and };
}

export const OFFER_ORDER: Prisma.OfferOrderByWithRelationInput[] = [{ startsAt: 'asc' }, { id: 'asc' }];
