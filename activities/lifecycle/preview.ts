// Authorization previews: what the purchase would earn and spend if it settled now. Nothing
// is posted to the ledger; the preview and its trace are recorded on the authorization, and
// a qualified_auth webhook record is written when it qualifies.
import type { Prisma } from '../../prisma/generated/client';
import { recordWebhook } from '../webhooks/record';
import { lockEvent, loadDecisionContext } from './context';
import { decideReward } from './decide';
import { storedOutcome } from './stored-outcome';
import type { LifecycleDeps } from './deps';
import type { StepInput, StepOutcome } from './types';

export async function previewAuthorization(deps: LifecycleDeps, input: StepInput): Promise<StepOutcome> {
  const at = input.atMs !== undefined ? new Date(input.atMs) : deps.clock.now();
  return deps.db.$transaction(async (tx) => {
    const event = await lockEvent(tx, input.eventId);
    if (event.processedAt) return storedOutcome(tx, event);
    const decision = decideReward(await loadDecisionContext(tx, event, at), at);
    const { cashbackMinor, brandedMinor, spentMinor } = decision.settlement;
    const status = decision.status === 'matched' ? 'previewed' : 'not_matched';
    const preview = { cashbackMinor, brandedMinor, spentMinor, earnedAmountMinor: cashbackMinor + brandedMinor };
    await tx.ingestedEvent.update({
      where: { id: event.id },
      data: { rewardStatus: status, merchantId: decision.merchantId, matchTrace: { ...decision.trace, outcome: status, preview } as Prisma.InputJsonValue, processedAt: at, failureReason: null },
    });
    let webhookId: string | undefined;
    if (status === 'previewed') {
      webhookId = await recordWebhook(tx, {
        issuerId: event.issuerId,
        type: 'qualified_auth',
        sourceEventId: event.id,
        at,
        data: { chgId: event.chgId, authorizationId: event.id, externalId: event.externalId, merchantId: decision.merchantId, currency: 'usd', rewardEventIds: [], rewardGrantIds: [], ...preview },
      });
    }
    return { status, merchantId: decision.merchantId ?? undefined, webhookId };
  });
}

/** The authorization was reversed before settlement: its preview no longer holds. */
export function voidPreview(deps: LifecycleDeps, input: StepInput): Promise<StepOutcome> {
  return closePreview(deps, input, 'voided');
}

/** No settlement arrived within the time-out: the preview lapses. */
export function lapsePreview(deps: LifecycleDeps, input: StepInput): Promise<StepOutcome> {
  return closePreview(deps, input, 'lapsed');
}

async function closePreview(deps: LifecycleDeps, input: StepInput, status: 'voided' | 'lapsed'): Promise<StepOutcome> {
  const at = input.atMs !== undefined ? new Date(input.atMs) : deps.clock.now();
  return deps.db.$transaction(async (tx) => {
    const event = await lockEvent(tx, input.eventId);
    // Conditional on the current status, so a repeat (or a late reversal) changes nothing.
    if (['pending', 'previewed', 'not_matched'].includes(event.rewardStatus)) {
      await tx.ingestedEvent.update({ where: { id: event.id }, data: { rewardStatus: status, processedAt: event.processedAt ?? at } });
    }
    return { status, merchantId: event.merchantId ?? undefined };
  });
}
