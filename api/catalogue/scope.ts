// Issuer scoping of the catalogue. An issuer reads merchants through one of its groups;
// a group of another issuer, a merchant hidden from the issuer and a missing one all
// answer the same 404, so existence never leaks (API.md, Conventions).
import { errors } from '../../core/errors';
import type { OfferMerchant } from './present';
import type { Db } from '../../prisma/client';
import type { CardholderGroup, Merchant, Offer, Prisma } from '../../prisma/generated/client';

type Reader = Db | Prisma.TransactionClient;

/** Merchants an issuer may see: those for every issuer (issuer_ids NULL) and those naming it. */
export function visibleTo(issuerId: string): Prisma.MerchantWhereInput {
  // `equals: null` is how Prisma spells IS NULL on a list column; its types do not say so.
  return { OR: [{ issuerIds: { equals: null as unknown as string[] } }, { issuerIds: { has: issuerId } }] };
}

/** The 404 of a group that is missing or another issuer's (the same answer: existence never leaks). */
export function groupNotFound(chgId: string) {
  return errors.notFound('chg_not_found', `No cardholder group ${chgId}.`);
}

export async function requireGroup(db: Reader, issuerId: string, chgId: string): Promise<CardholderGroup> {
  const group = await db.cardholderGroup.findFirst({ where: { id: chgId, issuerId } });
  if (!group) throw groupNotFound(chgId);
  return group;
}

export async function requireVisibleMerchant(db: Reader, issuerId: string, merchantId: string): Promise<Merchant> {
  const merchant = await db.merchant.findFirst({ where: { AND: [{ id: merchantId }, visibleTo(issuerId)] } });
  if (!merchant) throw errors.notFound('merchant_not_found', `No merchant ${merchantId}.`);
  return merchant;
}

/** An offer of a merchant the issuer sees; with merchantId, it must also be that merchant's. */
export async function requireVisibleOffer(
  db: Reader,
  issuerId: string,
  offerId: string,
  merchantId?: string,
): Promise<Offer & { merchant: OfferMerchant }> {
  const offer = await db.offer.findFirst({
    where: { id: offerId, ...(merchantId ? { merchantId } : {}), merchant: visibleTo(issuerId) },
    include: { merchant: { select: OFFER_MERCHANT_FIELDS } },
  });
  if (!offer)
    throw errors.notFound('offer_not_found', `No offer ${offerId}${merchantId ? ` for merchant ${merchantId}` : ''}.`);
  return offer;
}

/** What presentIssuerOffer needs of an offer's merchant. */
export const OFFER_MERCHANT_FIELDS = {
  status: true,
  brandedEnabled: true,
  brandedAvailabilityDelayDays: true,
  brandedExpiryDays: true,
} as const;
