// Database filters for the offer list. statusWhere is offerStatusAt
// (core/rules/offer-status.ts) restated in SQL terms, so a filtered page holds exactly
// the offers the presented `status` says; keep the two in step.
import type { Prisma } from '../../prisma/generated/client';
import type { OfferStatus } from '../../core/rules/offer-status';
import { cursorDate, decodeCursor } from '../pagination';

export interface OfferFilters {
  merchantId?: string;
  status?: OfferStatus;
  type?: 'cashback' | 'branded';
  cursor?: string;
}

export function statusWhere(status: OfferStatus, now: Date): Prisma.OfferWhereInput {
  switch (status) {
    case 'scheduled':
      return { status: 'active', startsAt: { gt: now }, OR: [{ endsAt: null }, { endsAt: { gt: now } }] };
    case 'active':
      return { status: 'active', startsAt: { lte: now }, OR: [{ endsAt: null }, { endsAt: { gt: now } }] };
    case 'ended':
      return { OR: [{ status: 'inactive' }, { endsAt: { lte: now } }] };
  }
}

export function typeWhere(type: 'cashback' | 'branded'): Prisma.OfferWhereInput {
  return type === 'cashback' ? { cashbackRateBps: { gt: 0 } } : { brandedRateBps: { gt: 0 } };
}

/** Offers sort by startsAt then id; the cursor holds the last one served. */
export function offerListWhere(merchantScope: Prisma.MerchantWhereInput, filters: OfferFilters, now: Date): Prisma.OfferWhereInput {
  const and: Prisma.OfferWhereInput[] = [{ merchant: merchantScope }];
  if (filters.merchantId) and.push({ merchantId: filters.merchantId });
  if (filters.status) and.push(statusWhere(filters.status, now));
  if (filters.type) and.push(typeWhere(filters.type));
  const after = decodeCursor(filters.cursor, 2);
  if (after) {
    const startsAt = cursorDate(after[0]);
    and.push({ OR: [{ startsAt: { gt: startsAt } }, { startsAt, id: { gt: String(after[1]) } }] });
  }
  return { AND: and };
}

export const OFFER_ORDER: Prisma.OfferOrderByWithRelationInput[] = [{ startsAt: 'asc' }, { id: 'asc' }];
