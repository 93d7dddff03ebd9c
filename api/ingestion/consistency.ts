// Event data the service can check against what it knows, and refuses when they disagree
// (docs/decisions/0016-ingestion-identity-and-consistency.md). The card id names the
// card; cardLast4 and network are the issuer's description of that same card, so a
// difference means the issuer's systems disagree about which card paid, and nothing may
// be posted until they agree. A refund takes back reward from its purchase's group, so its
// card must be of that group: reward never moves between households through a refund.
// Pure functions: store.ts decides what a refusal means for an event already stored.
import { errors, type ApiError, type FieldError } from '../../core/errors';
import type { ResolvedCard } from './resolve';
import type { EventFailureReason, IngestedEvent, SettledEvent } from './schemas';

export function eventFailure(reasonCode: EventFailureReason, message: string, fieldErrors?: FieldError[]): ApiError {
  return errors.validation(reasonCode, message, fieldErrors);
}

/** The fields of the event that describe another card than the one it names. */
export function cardDetailsMismatches(event: IngestedEvent, card: ResolvedCard): FieldError[] {
  const found: FieldError[] = [];
  // Only the issuer's own card is shown (the resolution is per issuer), and only what the
  // issuer itself told us about it.
  if (event.cardLast4 !== card.last4)
    found.push({ path: '/cardLast4', message: `is ${event.cardLast4} but the card ends in ${card.last4}` });
  if (event.network !== card.network)
    found.push({ path: '/network', message: `is ${event.network} but the card is ${card.network}` });
  return found;
}

/**
 * The stored events an event names or is named by, as far as its consistency depends on them:
 * a refund's purchase; a settlement's authorization, or an authorization's settlement.
 */
export interface EventLinks {
  purchase?: { chgId: string; currency: string };
  counterpart?: { kind: 'authorization' | 'settlement'; externalId: string; currency: string };
}

/**
 * Why an event that names a known card (and, for a refund, a known purchase) must still be
 * refused; undefined when its data agree.
 */
export function refusalOf(event: IngestedEvent, card: ResolvedCard, links: EventLinks = {}): ApiError | undefined {
  const { purchase } = links;
  const mismatches = cardDetailsMismatches(event, card);
  if (mismatches.length > 0) {
    const fields = mismatches.map((m) => m.path.slice(1)).join(' and ');
    return eventFailure(
      'card_details_mismatch',
      `The event's ${fields} ${mismatches.length > 1 ? 'do' : 'does'} not match card ${event.cardId}.`,
      mismatches,
    );
  }
  if (purchase && purchase.chgId !== card.chgId) {
    const related = (event as SettledEvent).relatedTransactionId;
    return eventFailure(
      'related_transaction_mismatch',
      `The refund's card is in another cardholder group than purchase ${related}.`,
      [
        {
          path: '/relatedTransactionId',
          message: "names a purchase of another cardholder group than the refund's card",
        },
      ],
    );
  }
  return currencyRefusal(event, links);
}

/**
 * Amounts in different currencies are never compared: a refund of a usd purchase in yen
 * would otherwise claw back as if yen were cents, and a settlement would replace its
 * authorization's preview across currencies. The pair is refused whichever came first.
 */
function currencyRefusal(event: IngestedEvent, { purchase, counterpart }: EventLinks): ApiError | undefined {
  if (purchase && purchase.currency !== event.currency) {
    const related = (event as SettledEvent).relatedTransactionId;
    return eventFailure(
      'currency_mismatch',
      `The refund is in ${event.currency} but purchase ${related} is in ${purchase.currency}.`,
      [{ path: '/currency', message: `is ${event.currency} but the purchase is in ${purchase.currency}` }],
    );
  }
  if (counterpart && counterpart.currency !== event.currency) {
    const path = counterpart.kind === 'authorization' ? '/authorizationId' : '/id';
    return eventFailure(
      'currency_mismatch',
      `The event is in ${event.currency} but its ${counterpart.kind} ${counterpart.externalId} is in ${counterpart.currency}.`,
      [
        {
          path: '/currency',
          message: `is ${event.currency} but the ${counterpart.kind} is in ${counterpart.currency}`,
        },
        {
          path,
          message:
            counterpart.kind === 'authorization'
              ? `names an authorization in ${counterpart.currency}`
              : `is named by a settlement in ${counterpart.currency}`,
        },
      ],
    );
  }
  return undefined;
}
