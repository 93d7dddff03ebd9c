// Everything a reward decision about one stored event depends on, read inside the
// activity's database transaction: the event (locked, so a retried or concurrent activity
// waits and then sees what the first one did), the issuer, the card's state, the matched
// merchant with its offers, the group's activation and what the group already earned.
import { ApplicationFailure } from '@temporalio/activity';
import type { Prisma, IngestedEvent, Merchant, Offer, Activation, Issuer } from '../../prisma/generated/client';
import { matchMerchant, type MerchantMatch } from '../../core/rules/matching';
import type { EarnOffer } from '../../core/rules/eligibility';
import type { SpendGrant } from '../../core/rules/spend-eligibility';
import { visibleTo } from '../../api/catalogue/scope';
import { toEarnOffer } from '../../api/catalogue/present';
import { loadBrandedGrants } from '../../api/catalogue/branded-grants';
import { fromDbMinor } from '../../core/ledger';
import type { IngestedEvent as EventPayload } from '../../api/ingestion/schemas';
import { NON_RETRYABLE } from '../../workflows/activity-options';

type Tx = Prisma.TransactionClient;

export async function lockEvent(tx: Tx, eventId: string): Promise<IngestedEvent> {
  const locked = await tx.$queryRaw<Array<{ id: string }>>`SELECT id FROM ingested_event WHERE id = ${eventId} FOR UPDATE`;
  if (locked.length === 0) throw ApplicationFailure.nonRetryable(`No stored event ${eventId}`, NON_RETRYABLE.eventNotFound);
  return tx.ingestedEvent.findUniqueOrThrow({ where: { id: eventId } });
}

export interface DecisionContext {
  event: IngestedEvent;
  payload: EventPayload;
  issuer: Issuer;
  groupStatus: 'active' | 'inactive';
  cardholderStatus: 'active' | 'inactive';
  cardStatus: 'active' | 'inactive';
  match: MerchantMatch;
  merchant: Merchant | null;
  offers: Offer[];
  earnOffers: EarnOffer[];
  activation: Activation | null;
  earnedSoFarByOffer: Record<string, number>;
  grants: SpendGrant[];
}

export async function loadDecisionContext(tx: Tx, event: IngestedEvent, at: Date): Promise<DecisionContext> {
  const payload = event.payload as unknown as EventPayload;
  // Sequential on purpose: a transaction is one connection, which runs one query at a time.
  const issuer = await tx.issuer.findUniqueOrThrow({ where: { id: event.issuerId } });
  const group = await tx.cardholderGroup.findUniqueOrThrow({ where: { id: event.chgId }, select: { status: true } });
  const cardholder = await tx.cardholder.findUniqueOrThrow({ where: { id: event.cardholderId }, select: { status: true } });
  const card = await tx.card.findUniqueOrThrow({ where: { id: event.cardId }, select: { status: true } });
  const match = matchMerchant(
    { merchantId: payload.merchantId, merchantDescriptor: payload.merchantDescriptor, mcc: payload.mcc },
    await matchableMerchants(tx, issuer, payload.merchantId),
    issuer.environment as 'sandbox' | 'production',
  );
  const merchant = match.merchantId ? await tx.merchant.findUnique({ where: { id: match.merchantId } }) : null;
  const offers = merchant ? await tx.offer.findMany({ where: { merchantId: merchant.id }, orderBy: [{ startsAt: 'asc' }, { id: 'asc' }] }) : [];
  const activation = merchant ? await tx.activation.findFirst({ where: { issuerId: event.issuerId, chgId: event.chgId, merchantId: merchant.id } }) : null;
  const earnedSoFarByOffer = merchant ? await earnedByOffer(tx, event.issuerId, event.chgId, merchant.id) : {};
  const grants = merchant ? await loadBrandedGrants(tx, event.issuerId, event.chgId, merchant.id, at) : [];
  return {
    event,
    payload,
    issuer,
    groupStatus: group.status as 'active' | 'inactive',
    cardholderStatus: cardholder.status as 'active' | 'inactive',
    cardStatus: card.status as 'active' | 'inactive',
    match,
    merchant,
    offers,
    // A merchant without branded balance cannot fund it: its offers earn cashback only.
    earnOffers: offers.map(toEarnOffer).map((o) => (merchant?.brandedEnabled ? o : { ...o, brandedRateBps: 0 })),
    activation,
    earnedSoFarByOffer,
    grants,
  };
}

// Sandbox names the merchant directly, so only that one is loaded; production matching
// needs every merchant the issuer may see (their match rules).
async function matchableMerchants(tx: Tx, issuer: Issuer, merchantId: string | undefined) {
  const where = issuer.environment === 'sandbox' ? { AND: [{ id: merchantId ?? '' }, visibleTo(issuer.id)] } : visibleTo(issuer.id);
  return tx.merchant.findMany({
    where,
    select: { id: true, matchDescriptorPatterns: true, matchAcquirerMerchantIds: true, matchMccs: true },
  });
}

/** Net reward per offer the group has kept (earned minus clawed back), for per-group caps. */
async function earnedByOffer(tx: Tx, issuerId: string, chgId: string, merchantId: string): Promise<Record<string, number>> {
  const rows = await tx.rewardEvent.groupBy({
    by: ['offerId', 'type'],
    where: { issuerId, chgId, merchantId, offerId: { not: null } },
    _sum: { amountMinor: true },
  });
  const totals: Record<string, number> = {};
  for (const row of rows) {
    const amount = fromDbMinor(row._sum.amountMinor ?? 0n);
    const sign = row.type.endsWith('_earned') ? 1 : row.type.endsWith('_clawed_back') ? -1 : 0;
    totals[row.offerId!] = (totals[row.offerId!] ?? 0) + sign * amount;
  }
  return totals;
}
