// One reward posting: the reward event the cardholder sees and the ledger transfer that moves
// its money, linked by the event's id, with that id added to the step's list (the outcome,
// the trace and the webhook name them); and the transfers that accompany a reward on a funded
// offer (the issuer's share, the commission), which belong to its event. Settlements and refunds
// make their postings through this one place; they differ only in how the rows are written:
//   - a settlement adds them to the batch its one statement writes (core/domain/ledger/batch.ts);
//   - a refund records the event, then posts the transfer (postTransfer and friends), in its
//     transaction: refunds are rare, and that path checks each transfer on its own.
// The idempotency keys are the caller's: they are derived from the step's event and never change.
import { newId } from '../../core/ids';
import {
  NEGATIVE_REWARD_EVENT_TYPES,
  type AccompanyingKind,
  type RewardEventType,
  type TransferKind,
} from '../../core/ledger';
import {
  newTransferId,
  type BatchRewardEvent,
  type BatchTransfer,
  type PostingBatch,
} from '../../core/domain/ledger/batch';
import { postTransfer, recordRewardEvent } from '../../core/domain/ledger';
import type { Tx } from '../../core/domain/ledger/tx';

export interface RewardPosting {
  /** The group, merchant and purchase both rows belong to. */
  common: { chgId: string; merchantId: string; transactionId: string };
  amountMinor: number;
  event: {
    idempotencyKey: string;
    type: RewardEventType;
    offerId: string | null;
    rewardGrantId?: string | null;
    sourceEventId?: string | null;
    description: string;
    /** The completion of a cumulative offer it earns or claws back. */
    completion?: number | null;
  };
  transfer: { idempotencyKey: string; kind: TransferKind };
}

export interface LinkedPosting {
  rewardEvent: BatchRewardEvent;
  transfer: BatchTransfer;
}

/**
 * The two rows of a posting with fresh ids, the transfer pointing at its event. The event shows
 * the amount as the cardholder sees it: negative for cashback leaving the balance.
 */
export function linkPosting(p: RewardPosting): LinkedPosting {
  const rewardEventId = newId('brevt');
  const { rewardGrantId = null, sourceEventId = null, completion = null, ...event } = p.event;
  const eventAmountMinor = NEGATIVE_REWARD_EVENT_TYPES.includes(event.type) ? -p.amountMinor : p.amountMinor;
  return {
    rewardEvent: {
      id: rewardEventId,
      ...event,
      rewardGrantId,
      sourceEventId,
      completion,
      amountMinor: eventAmountMinor,
      ...p.common,
    },
    transfer: { id: newTransferId(), ...p.transfer, amountMinor: p.amountMinor, rewardEventId, ...p.common },
  };
}

/**
 * Settlement: adds the posting to `batch` and its event id to `rewardEventIds`. Returns the
 * linked rows, whose ids the grant and the draws of the same statement refer to.
 */
export function addPosting(batch: PostingBatch, rewardEventIds: string[], p: RewardPosting): LinkedPosting {
  const linked = linkPosting(p);
  batch.transfers.push(linked.transfer);
  batch.rewardEvents.push(linked.rewardEvent);
  rewardEventIds.push(linked.rewardEvent.id);
  return linked;
}

/**
 * A transfer that accompanies a reward and belongs to its reward event (the issuer's share, the
 * commission, and their returns on a refund): no reward event of its own.
 */
export interface AccompanyingPosting {
  common: RewardPosting['common'];
  amountMinor: number;
  rewardEventId: string;
  transfer: { idempotencyKey: string; kind: AccompanyingKind };
}

const accompanyingTransfer = (p: AccompanyingPosting): BatchTransfer => ({
  id: newTransferId(),
  ...p.transfer,
  amountMinor: p.amountMinor,
  rewardEventId: p.rewardEventId,
  ...p.common,
});

/** Settlement: adds an accompanying transfer to `batch`. */
export function addAccompanying(batch: PostingBatch, p: AccompanyingPosting): void {
  batch.transfers.push(accompanyingTransfer(p));
}

type OneTransfer = ReturnType<typeof accompanyingTransfer> | LinkedPosting['transfer'];

/** Posts one transfer of a refund's, in `tx`, at the refund's time. */
function postOne(tx: Tx, base: { issuerId: string; at: Date }, merchantId: string, transfer: OneTransfer) {
  return postTransfer(tx, {
    idempotencyKey: transfer.idempotencyKey,
    kind: transfer.kind,
    issuerId: base.issuerId,
    chgId: transfer.chgId,
    merchantId,
    amountMinor: transfer.amountMinor,
    rewardEventId: transfer.rewardEventId,
    transactionId: transfer.transactionId,
    at: base.at,
  });
}

/** Refund: posts an accompanying transfer in `tx`. */
export async function postAccompanying(tx: Tx, base: { issuerId: string; at: Date }, p: AccompanyingPosting) {
  const transfer = accompanyingTransfer(p);
  await postOne(tx, base, p.common.merchantId, transfer);
}

/**
 * Refund: records the event, then posts its transfer, in `tx`, and adds the event id to
 * `rewardEventIds`. `marks` are the event's columns a settlement never sets.
 */
export async function postNow(
  tx: Tx,
  rewardEventIds: string[],
  base: { issuerId: string; at: Date },
  p: RewardPosting,
  marks: { coversBrandedShortfall?: boolean } = {},
): Promise<string> {
  const { rewardEvent, transfer } = linkPosting(p);
  await recordRewardEvent(tx, { ...rewardEvent, ...marks, issuerId: base.issuerId, occurredAt: base.at });
  await postOne(tx, base, p.common.merchantId, transfer);
  rewardEventIds.push(rewardEvent.id);
  return rewardEvent.id;
}
