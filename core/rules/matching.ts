// Which catalogue merchant a card event belongs to (API.md, Ingestion: merchantId).
// Production events carry ISO 8583 merchant data, matched against each merchant's match rules.
// A sandbox event may force its merchant with an mp_ id; without one it is matched by the same
// rules, so an issuer can try its processor's real descriptors before going live.
import { isId } from '../ids';
import { descriptorTokens, patternMatchLength } from './descriptor';

export interface MatchableMerchant {
  id: string;
  matchDescriptorPatterns: string[];
  matchAcquirerMerchantIds: string[];
  /** When non-empty, a descriptor match also needs the event's MCC to be one of these. */
  matchMccs: string[];
}

export interface MatchEvent {
  merchantId?: string;
  merchantDescriptor: string;
  mcc?: string;
}

export type MatchRule = 'sandbox_merchant_id' | 'acquirer_merchant_id' | 'descriptor_pattern' | 'none';

export interface MerchantMatch {
  merchantId: string | null;
  rule: MatchRule;
  detail: string;
}

export function matchMerchant(
  event: MatchEvent,
  merchants: MatchableMerchant[],
  environment: 'sandbox' | 'production',
): MerchantMatch {
  return environment === 'sandbox' && isId('mp', event.merchantId)
    ? forcedMatch(event.merchantId, merchants)
    : matchByRules(event, merchants);
}

/** A sandbox event that names an mp_ id means that merchant, whatever its descriptor says. */
function forcedMatch(id: string, merchants: MatchableMerchant[]): MerchantMatch {
  if (!merchants.some((m) => m.id === id))
    return { merchantId: null, rule: 'none', detail: `${id} is not in the catalogue` };
  return { merchantId: id, rule: 'sandbox_merchant_id', detail: `merchantId ${id}` };
}

function matchByRules(event: MatchEvent, merchants: MatchableMerchant[]): MerchantMatch {
  // The acquirer's merchant id is exact and assigned by the acquirer: it wins over names.
  if (event.merchantId) {
    const byAcquirerId = sortedById(merchants).find((m) => m.matchAcquirerMerchantIds.includes(event.merchantId!));
    if (byAcquirerId)
      return {
        merchantId: byAcquirerId.id,
        rule: 'acquirer_merchant_id',
        detail: `acquirer merchant id ${event.merchantId}`,
      };
  }
  const tokens = descriptorTokens(event.merchantDescriptor);
  const normalized = tokens.join(' ');
  let best: { merchant: MatchableMerchant; pattern: string; length: number } | undefined;
  const mccRejected: string[] = [];
  for (const merchant of sortedById(merchants)) {
    for (const pattern of merchant.matchDescriptorPatterns) {
      const length = patternMatchLength(tokens, pattern);
      if (length === 0) continue;
      if (merchant.matchMccs.length > 0 && (!event.mcc || !merchant.matchMccs.includes(event.mcc))) {
        mccRejected.push(
          `${merchant.id} (pattern "${pattern}", MCC ${event.mcc ?? 'absent'} not in ${merchant.matchMccs.join(',')})`,
        );
        continue;
      }
      // The longest pattern is the most specific ("BLUE BOTTLE COFFEE" over "BLUE").
      if (!best || length > best.length) best = { merchant, pattern, length };
    }
  }
  if (best)
    return {
      merchantId: best.merchant.id,
      rule: 'descriptor_pattern',
      detail: `"${normalized}" matched pattern "${best.pattern}"`,
    };
  const rejected = mccRejected.length > 0 ? `; rejected by MCC: ${mccRejected.join('; ')}` : '';
  return { merchantId: null, rule: 'none', detail: `no rule matched "${normalized}"${rejected}` };
}

function sortedById(merchants: MatchableMerchant[]): MatchableMerchant[] {
  return [...merchants].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
