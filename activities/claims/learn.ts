// Teaching a merchant's match rules what a claim proved it missed: the purchase's acquirer
// merchant id when the event carried one (exact, assigned by the acquirer), else its
// descriptor as a pattern. The next purchase that carries it matches on its own. The catalogue
// is shared, so the change is audited with the claim that taught it.
import { descriptorTokens } from '../../core/rules/descriptor';
import { isId } from '../../core/ids';
import { recordAudit } from '../../core/domain/audit';
import type { IngestedEvent as EventPayload } from '../../core/domain/events';
import type { Tx } from '../../core/domain/ledger';

export interface LearnedRule {
  merchantId: string;
  rule: 'acquirer_merchant_id' | 'descriptor_pattern';
  value: string;
}

/** What the purchase teaches, or null when it carries nothing usable (an mp_ id in sandbox). */
export function ruleFromPurchase(
  payload: Pick<EventPayload, 'merchantId' | 'merchantDescriptor'>,
): Omit<LearnedRule, 'merchantId'> | null {
  if (payload.merchantId && !isId('mp', payload.merchantId))
    return { rule: 'acquirer_merchant_id', value: payload.merchantId };
  const pattern = descriptorTokens(payload.merchantDescriptor).join(' ');
  return pattern ? { rule: 'descriptor_pattern', value: pattern } : null;
}

/** Adds the rule to the merchant unless it has it; audited either way with the claim. */
export async function learnMatchRule(
  tx: Tx,
  input: { merchantId: string; payload: EventPayload; claimId: string; actor: string; at: Date },
): Promise<LearnedRule | null> {
  const learned = ruleFromPurchase(input.payload);
  if (!learned) return null;
  const column = learned.rule === 'acquirer_merchant_id' ? 'match_acquirer_merchant_ids' : 'match_descriptor_patterns';
  // array_append only when absent: a retried resolution must not add it twice.
  await tx.$executeRawUnsafe(
    `UPDATE merchant SET ${column} = array_append(${column}, $1), updated_at = $2
      WHERE id = $3 AND NOT ($1 = ANY (${column}))`,
    learned.value,
    input.at,
    input.merchantId,
  );
  await recordAudit(
    tx,
    {
      actor: input.actor,
      action: 'merchant.learn_match_rule',
      targetId: input.merchantId,
      details: { claimId: input.claimId, rule: learned.rule, value: learned.value },
    },
    input.at,
  );
  return { merchantId: input.merchantId, ...learned };
}
