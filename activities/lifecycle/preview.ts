// Authorization previews: what the purchase would earn and spend if it settled now. Nothing
// is posted to the ledger; the preview and its trace are recorded on the authorization, and
// a qualified_auth webhook record is written when it qualifies.
import { Prisma } from '../../prisma/generated/client';
import { sqlTransaction, type SqlTx } from '../../prisma/sql-transaction';
import { webhookWrite } from '../../core/domain/webhook-records';
import { writtenOutboxRows, type OutboxRow } from '../webhooks/outbox';
import { lockEvent, lockEventWithContext, type SettledPurchase } from './context';
import { decideReward } from './decide';
import { storedOutcome } from './stored-outcome';
import type { LifecycleDeps } from './deps';
import type { StepInput, StepOutcome } from './types';
import type { QualifiedAuthData } from '../../core/webhooks/payloads';
import { factKey } from '../../core/webhooks/fact-webhooks';
import { recordFactWebhooks } from '../../core/domain/webhook-records';
import { issuerClockAt } from '../issuer-clock';
import type { IngestedEvent } from '../../prisma/generated/client';

export async function previewAuthorization(deps: LifecycleDeps, input: StepInput): Promise<StepOutcome> {
  const workflowAt = input.atMs !== undefined ? new Date(input.atMs) : deps.clock.now();
  await deps.faults?.beforeActivity?.('previewAuthorization', input.eventId);
  let written: OutboxRow[] = [];
  const outcome = await sqlTransaction(deps.db, async (tx) => {
    const { event, at, context, settledPurchase } = await lockEventWithContext(tx, input.eventId, workflowAt, {
      lockAccounts: false,
    });
    if (settledPurchase) return recordAfterSettlement(tx, event.id, settledPurchase, at);
    if (!context) return storedOutcome(tx, event);
    const decision = decideReward(context, at);
    const { cashbackMinor, brandedMinor, spentMinor } = decision.settlement;
    const status = decision.status === 'matched' ? 'previewed' : 'not_matched';
    const preview = { cashbackMinor, brandedMinor, spentMinor, earnedAmountMinor: cashbackMinor + brandedMinor };
    // A preview takes nothing from a budget: only its settlement will (budgets shows what was left).
    const trace = { ...decision.trace, budgetUse: null, budgetUses: [], outcome: status, preview };
    const webhook =
      status === 'previewed'
        ? webhookWrite(
            {
              issuerId: event.issuerId,
              type: 'qualified_auth',
              sourceEventId: event.id,
              at,
              data: {
                chgId: event.chgId,
                authorizationId: event.id,
                externalId: event.externalId,
                merchantId: decision.merchantId!,
                currency: 'usd',
                rewardEventIds: [],
                rewardGrantIds: [],
                earnedAmountMinor: preview.earnedAmountMinor,
                cashbackAmountMinor: cashbackMinor,
                brandedAmountMinor: brandedMinor,
                spentAmountMinor: spentMinor,
              } satisfies QualifiedAuthData,
            },
            deps.relay?.claimMs,
          )
        : undefined;
    // One statement: the outcome, and the webhook record with its NOTIFY.
    await tx.$queryRaw`
      WITH event_outcome AS (
        UPDATE ingested_event SET reward_status = ${status}, merchant_id = ${decision.merchantId}, match_trace = ${JSON.stringify(trace)}::jsonb,
               processed_at = ${at}, failure_reason = NULL
         WHERE id = ${event.id})
      ${webhook ? Prisma.sql`, ${webhook.cte}` : Prisma.empty}
      SELECT 1 AS written ${webhook ? Prisma.sql`, ${webhook.select}` : Prisma.empty}`;
    if (webhook) {
      written = writtenOutboxRows(
        {
          id: webhook.id,
          issuerId: event.issuerId,
          type: 'qualified_auth',
          sourceEventId: event.id,
          data: webhook.data,
          createdAt: at,
        },
        context.endpoints,
      );
    }
    // A sandbox issuer's clock offset tells the workflow where its settlement wait starts on
    // that clock (workflows/sandbox-clock.ts); production outcomes stay as they were.
    const clockOffsetMs =
      status === 'previewed' && context.issuer.clockOffsetMs !== 0 ? context.issuer.clockOffsetMs : undefined;
    return {
      status,
      merchantId: decision.merchantId ?? undefined,
      webhookId: webhook?.id,
      ...(clockOffsetMs ? { clockOffsetMs } : {}),
    } satisfies StepOutcome;
  });
  for (const row of written) deps.relay?.take(row);
  return outcome;
}

/**
 * An authorization that arrived after its purchase was settled is recorded against the
 * settlement, with no preview and no webhook: the settlement already posted what the
 * purchase earns, and a preview now would announce a reward that is not pending (docs/decisions/0014-late-authorizations.md).
 */
async function recordAfterSettlement(
  tx: SqlTx,
  eventId: string,
  purchase: SettledPurchase,
  at: Date,
): Promise<StepOutcome> {
  const trace = { outcome: 'after_settlement', settlementId: purchase.settlementId };
  await tx.$executeRaw`
    UPDATE ingested_event SET reward_status = 'after_settlement', merchant_id = ${purchase.merchantId}, match_trace = ${JSON.stringify(trace)}::jsonb,
           processed_at = ${at}, failure_reason = NULL
     WHERE id = ${eventId}`;
  return { status: 'after_settlement', merchantId: purchase.merchantId ?? undefined };
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
      await tx.ingestedEvent.update({
        where: { id: event.id },
        data: { rewardStatus: status, processedAt: event.processedAt ?? at },
      });
      if (status === 'lapsed' && event.rewardStatus === 'previewed') await recordLapse(tx, event, at);
    }
    return { status, merchantId: event.merchantId ?? undefined };
  });
}

/**
 * authorization_lapsed: only for a preview that qualified (a qualified_auth was sent), so
 * every lapse a receiver hears of answers a reward it was told of. Dated on the issuer's
 * clock, as the preview was.
 */
async function recordLapse(tx: SqlTx, event: IngestedEvent, workflowAt: Date): Promise<void> {
  const preview = (event.matchTrace as { preview?: { earnedAmountMinor?: number } } | null)?.preview;
  await recordFactWebhooks(tx, [
    {
      issuerId: event.issuerId,
      type: 'authorization_lapsed',
      factKey: factKey.authorizationLapsed(event.id),
      sourceId: event.id,
      at: await issuerClockAt(tx, event.issuerId, workflowAt),
      data: {
        chgId: event.chgId,
        merchantId: event.merchantId!,
        authorizationId: event.id,
        externalId: event.externalId,
        currency: 'usd',
        previewedAmountMinor: preview?.earnedAmountMinor ?? 0,
      },
    },
  ]);
}
