// Merchant activation for a group (API.md): per merchant, not per offer. The
// (chg_id, merchant_id) primary key makes PUT idempotent under concurrency: the insert
// skips on conflict and whoever lost the race reads the winner's row.
import { errors } from '../../core/errors';
import { offerStatusAt, type CatalogueStatus } from '../../core/rules/offer-status';
import type { Db } from '../../prisma/client';
import type { Activation, Prisma } from '../../prisma/generated/client';
import { requireGroup, requireVisibleMerchant } from '../catalogue/scope';

type Tx = Prisma.TransactionClient;

export interface ActivationKey {
  issuerId: string;
  chgId: string;
  merchantId: string;
}

export async function readActivation(db: Db | Tx, key: ActivationKey): Promise<Activation | null> {
  return db.activation.findFirst({ where: { chgId: key.chgId, merchantId: key.merchantId, issuerId: key.issuerId } });
}

async function checkPresentedOffer(db: Db, merchantId: string, offerId: string, now: Date): Promise<void> {
  const offer = await db.offer.findUnique({ where: { id: offerId } });
  if (!offer || offer.merchantId !== merchantId) {
    throw errors.validation('offer_not_of_merchant', `Offer ${offerId} is not an offer of merchant ${merchantId}.`, [
      { path: '/presentedOfferId', message: 'is not an offer of this merchant' },
    ]);
  }
  const status = offerStatusAt(
    { startsAt: offer.startsAt, endsAt: offer.endsAt, catalogueStatus: offer.status as CatalogueStatus },
    now,
  );
  if (status !== 'active') {
    throw errors.validation(
      'offer_not_active',
      `Offer ${offerId} is ${status}; only an active offer can be presented.`,
      [{ path: '/presentedOfferId', message: `offer is ${status}` }],
    );
  }
}

/**
 * `activated` (201) when this call made the merchant active: the first activation, or a
 * reactivation after a DELETE (clients count activations by 201). An active activation is
 * left as it is (the first presentedOfferId is kept: 200); an inactive one is reactivated
 * with a new activatedAt, keeping the earlier presentedOfferId unless a new one is given.
 * Of two concurrent reactivations only the one whose update changed the row answers 201.
 */
export async function activate(
  db: Db,
  key: ActivationKey,
  presentedOfferId: string | undefined,
  now: Date,
): Promise<{ activation: Activation; activated: boolean }> {
  const group = await requireGroup(db, key.issuerId, key.chgId);
  await requireVisibleMerchant(db, key.issuerId, key.merchantId);
  if (group.status !== 'active') {
    throw errors.conflict(
      'chg_inactive',
      `Group ${key.chgId} is deactivated; reactivate it before activating merchants.`,
    );
  }
  if (presentedOfferId) await checkPresentedOffer(db, key.merchantId, presentedOfferId, now);
  const inserted = await db.activation.createMany({
    data: [
      {
        ...key,
        status: 'active',
        activatedAt: now,
        presentedOfferId: presentedOfferId ?? null,
        createdAt: now,
        updatedAt: now,
      },
    ],
    skipDuplicates: true,
  });
  let reactivated = 0;
  if (inserted.count === 0) {
    // Only an inactive row changes; a concurrent reactivation makes this a no-op.
    const previous = await readActivation(db, key);
    ({ count: reactivated } = await db.activation.updateMany({
      where: { chgId: key.chgId, merchantId: key.merchantId, issuerId: key.issuerId, status: 'inactive' },
      data: {
        status: 'active',
        activatedAt: now,
        deactivatedAt: null,
        presentedOfferId: presentedOfferId ?? previous?.presentedOfferId ?? null,
        updatedAt: now,
      },
    }));
  }
  return { activation: (await readActivation(db, key))!, activated: inserted.count === 1 || reactivated === 1 };
}

/** Idempotent: deactivating an inactive or never-made activation changes nothing. */
export async function deactivate(db: Db, key: ActivationKey, now: Date): Promise<Activation | null> {
  await requireGroup(db, key.issuerId, key.chgId);
  await requireVisibleMerchant(db, key.issuerId, key.merchantId);
  await db.activation.updateMany({
    where: { chgId: key.chgId, merchantId: key.merchantId, issuerId: key.issuerId, status: 'active' },
    data: { status: 'inactive', deactivatedAt: now, updatedAt: now },
  });
  return readActivation(db, key);
}

/**
 * A deactivated group's activations stop being usable and stay so after the group is
 * reactivated (SPEC.md 3: later offers need activation again). Called in the transaction
 * that deactivates the group.
 */
export async function deactivateGroupActivations(tx: Tx, issuerId: string, chgId: string, now: Date): Promise<void> {
  await tx.activation.updateMany({
    where: { issuerId, chgId, status: 'active' },
    data: { status: 'inactive', deactivatedAt: now, updatedAt: now },
  });
}
