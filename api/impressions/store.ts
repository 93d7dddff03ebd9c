// Storing what the issuer's app showed a group (API.md, Targeted offers, "Impressions"). An item
// is stored only for an offer the group is shown, by the very rule its lists follow
// (api/catalogue/targeting.ts): an impression of an offer the group cannot see is the app's
// mistake and would put impressions in a control arm, which by design sees nothing. Each item
// stands alone: one refused item leaves the others stored.
import type { Db } from '../../prisma/client';
import { ApiError, errors } from '../../core/errors';
import { requireGroup } from '../catalogue/scope';
import { requireShownOffer } from '../catalogue/targeting';
import { IMPRESSION_CLOCK_SKEW_MS } from './schemas';

export interface ImpressionItem {
  offerId: string;
  at?: string;
  placement?: string;
}

export type ImpressionOutcome =
  | { index: number; offerId: string; status: 'stored' | 'duplicate'; at: Date }
  | { index: number; offerId: string; status: 'refused'; error: ApiError };

interface Batch {
  issuerId: string;
  chgId: string;
  items: readonly ImpressionItem[];
  /** The issuer's now: the default instant and the bound on a given one. */
  now: Date;
}

/** Stores each item on its own; 404 for the whole batch when the group is not the issuer's. */
export async function storeImpressions(db: Db, batch: Batch): Promise<ImpressionOutcome[]> {
  await requireGroup(db, batch.issuerId, batch.chgId);
  // One decision per offer of the batch: an app reports the same offer in several placements.
  const shown = new Map<string, Promise<ApiError | null>>();
  const shownOrWhy = (offerId: string) => {
    let decided = shown.get(offerId);
    if (!decided) {
      decided = requireShownOffer(db, { issuerId: batch.issuerId, chgId: batch.chgId, offerId, now: batch.now }).then(
        () => null,
        (err: unknown) => {
          if (err instanceof ApiError) return err;
          throw err;
        },
      );
      shown.set(offerId, decided);
    }
    return decided;
  };
  const outcomes: ImpressionOutcome[] = [];
  for (const [index, item] of batch.items.entries()) {
    const at = item.at === undefined ? batch.now : new Date(item.at);
    const refusal = tooLate(at, batch.now, index) ?? (await shownOrWhy(item.offerId));
    if (refusal) {
      outcomes.push({ index, offerId: item.offerId, status: 'refused', error: refusal });
      continue;
    }
    const stored = await insertImpression(db, batch, item, at);
    outcomes.push({ index, offerId: item.offerId, status: stored ? 'stored' : 'duplicate', at });
  }
  return outcomes;
}

function tooLate(at: Date, now: Date, index: number): ApiError | null {
  if (at.getTime() <= now.getTime() + IMPRESSION_CLOCK_SKEW_MS) return null;
  return errors.validation(
    'impression_in_future',
    `Impression ${index} is dated ${at.toISOString()}, more than 5 minutes after the issuer's now (${now.toISOString()}).`,
    [{ path: `/impressions/${index}/at`, message: 'must not be later than 5 minutes after now' }],
  );
}

/** True when stored, false when the same impression was stored before. */
async function insertImpression(db: Db, batch: Batch, item: ImpressionItem, at: Date): Promise<boolean> {
  const rows = await db.$queryRaw<Array<{ id: bigint }>>`
    INSERT INTO offer_impression (offer_id, chg_id, issuer_id, shown_at, placement)
    VALUES (${item.offerId}, ${batch.chgId}, ${batch.issuerId}, ${at}, ${item.placement ?? null})
    ON CONFLICT (offer_id, chg_id, shown_at, placement) DO NOTHING
    RETURNING id`;
  return rows.length === 1;
}
