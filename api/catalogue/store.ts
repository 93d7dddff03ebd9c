// The operator's writes to the catalogue. Shared by the operator API, the admin CLI and
// the catalogue import, so every path validates and audits alike.
import { errors } from '../../core/errors';
import { newId } from '../../core/ids';
import type { Db } from '../../prisma/client';
import { Prisma, type Merchant, type Offer } from '../../prisma/generated/client';
import { budgetPeriodKey, type BudgetPeriod } from '../../core/rules/budget';
import { audienceProblems } from '../../core/rules/audience';
import { fromDbMinor } from '../../core/ledger';
import { cursorDate, decodeCursor, toPage } from '../pagination';
import { recordAudit } from '../audit/store';
import { toInstant } from '../../core/timestamp';
import type { MerchantInput, OfferInput } from './schemas';
import { checkCumulativeTerms, rewardColumns, type MergedTerms } from './offer-reward';
import { isCumulative, type StoredReward } from '../../core/rules/reward-kinds';

type Tx = Prisma.TransactionClient;

const bigOrNull = (v: number | null | undefined) => (v === undefined ? undefined : v === null ? null : BigInt(v));

/** Prisma data for the fields present in the input; issuerIds is written by setIssuerIds. */
function merchantData(input: MerchantInput) {
  const b = input.brandedBalance ?? {};
  const r = input.matchRules ?? {};
  return {
    name: input.name,
    category: input.category,
    status: input.status,
    logoUrl: input.logoUrl,
    websiteUrl: input.websiteUrl,
    brandedEnabled: b.enabled,
    brandedSpendMinimumMinor: bigOrNull(b.spendMinimumMinor) ?? undefined,
    brandedAvailabilityDelayDays: b.availabilityDelayDays,
    brandedExpiryDays: b.expiryDays,
    matchDescriptorPatterns: r.descriptorPatterns,
    matchAcquirerMerchantIds: r.acquirerMerchantIds,
    matchMccs: r.mccs,
    stacking: input.stacking,
    stackCapBps: input.stackCapBps,
  };
}

// Prisma cannot write NULL into a list column, so "visible to every issuer" is written in SQL.
async function setIssuerIds(tx: Tx, merchantId: string, issuerIds: string[] | null | undefined): Promise<void> {
  if (issuerIds === undefined) return;
  if (issuerIds === null) await tx.$executeRaw`UPDATE "merchant" SET "issuer_ids" = NULL WHERE "id" = ${merchantId}`;
  else await tx.merchant.update({ where: { id: merchantId }, data: { issuerIds } });
}

/** Creates the merchant, or with `id` of an existing one, replaces the fields given (import). */
export async function saveMerchant(
  db: Db,
  input: MerchantInput,
  actor: string,
  now: Date,
  id?: string,
): Promise<{ merchant: Merchant; created: boolean }> {
  return db.$transaction(async (tx) => {
    const existing = id ? await tx.merchant.findUnique({ where: { id } }) : null;
    const merchantId = existing?.id ?? id ?? newId('mp');
    requireStackCap(input, existing);
    if (existing) {
      await tx.merchant.update({ where: { id: merchantId }, data: { ...merchantData(input), updatedAt: now } });
    } else {
      if (!input.name || !input.category)
        throw errors.validation('invalid_body', 'A new merchant needs a name and a category.');
      await tx.merchant.create({
        data: {
          ...merchantData(input),
          name: input.name,
          category: input.category,
          id: merchantId,
          createdAt: now,
          updatedAt: now,
        },
      });
    }
    await setIssuerIds(tx, merchantId, existing ? input.issuerIds : (input.issuerIds ?? undefined));
    const saved = await tx.merchant.findUniqueOrThrow({ where: { id: merchantId } });
    // Balance that becomes available only once it has expired could never be spent.
    if (saved.brandedAvailabilityDelayDays >= saved.brandedExpiryDays) {
      throw errors.validation(
        'availability_not_before_expiry',
        `The availability delay (${saved.brandedAvailabilityDelayDays} days) must be shorter than the expiry (${saved.brandedExpiryDays} days).`,
        [{ path: '/brandedBalance/availabilityDelayDays', message: 'must be less than expiryDays' }],
      );
    }
    await recordAudit(
      tx,
      { actor, action: existing ? 'merchant.update' : 'merchant.create', targetId: merchantId, details: { ...input } },
      now,
    );
    return { merchant: saved, created: !existing };
  });
}

/** A merchant that stacks its offers names the cap on them (the database refuses one without). */
function requireStackCap(input: MerchantInput, existing: Merchant | null): void {
  const stacking = input.stacking ?? existing?.stacking ?? 'best_of';
  const capBps = input.stackCapBps !== undefined ? input.stackCapBps : (existing?.stackCapBps ?? null);
  if (stacking === 'stack' && capBps === null)
    throw errors.validation('stack_cap_required', 'A merchant whose offers stack needs a stackCapBps.', [
      { path: '/stackCapBps', message: 'required when stacking is stack' },
    ]);
}

export async function getMerchant(db: Db | Tx, merchantId: string): Promise<Merchant> {
  const merchant = await db.merchant.findUnique({ where: { id: merchantId } });
  if (!merchant) throw errors.notFound('merchant_not_found', `No merchant ${merchantId}.`);
  return merchant;
}

export async function updateMerchant(
  db: Db,
  merchantId: string,
  input: MerchantInput,
  actor: string,
  now: Date,
): Promise<Merchant> {
  await getMerchant(db, merchantId);
  return (await saveMerchant(db, input, actor, now, merchantId)).merchant;
}

function offerData(input: OfferInput, existing: Offer | null) {
  return {
    title: input.title,
    description: input.description,
    ...rewardColumns(input, existing),
    minSpendMinor: bigOrNull(input.minSpendMinor) ?? undefined,
    maxRewardMinor: bigOrNull(input.maxRewardMinor),
    maxRewardPerChgMinor: bigOrNull(input.maxRewardPerChgMinor),
    maxRedemptionsPerChg: input.maxRedemptionsPerChg,
    mccs: input.mccs ?? undefined,
    startsAt: input.startsAt === undefined ? undefined : toInstant(input.startsAt),
    endsAt: input.endsAt === undefined ? undefined : input.endsAt === null ? null : toInstant(input.endsAt),
    returnPeriodDays: input.returnPeriodDays,
    budgetMinor: bigOrNull(input.budgetMinor),
    budgetPeriod: input.budgetPeriod,
    fundingIssuerShareBps: input.funding?.issuerShareBps,
    commissionRateBps: input.commission?.rateBps,
    commissionFlatMinor: bigOrNull(input.commission?.flatMinor) ?? undefined,
    activation: input.activation,
    audience:
      input.audience === undefined
        ? undefined
        : input.audience === null
          ? Prisma.DbNull
          : (input.audience as Prisma.InputJsonValue),
    holdoutBps: input.holdoutBps,
    priority: input.priority,
    status: input.status,
  };
}

/** What JSON schema cannot say of an audience: no segment both included and excluded. */
function checkAudience(input: OfferInput): void {
  if (!input.audience) return;
  const problems = audienceProblems(input.audience);
  if (problems.length > 0) throw errors.validation('invalid_body', 'The audience contradicts itself.', problems);
}

/** Rules on the offer as it will be stored (input merged over the stored row). */
function checkOffer(offer: {
  cashbackRateBps: number;
  brandedRateBps: number;
  startsAt: Date;
  endsAt: Date | null;
  /** A cumulative kind pays per completion, no rate on a purchase. */
  cumulative: boolean;
}): void {
  if (!offer.cumulative && offer.cashbackRateBps === 0 && offer.brandedRateBps === 0) {
    throw errors.validation('invalid_body', 'An offer needs a cashback or a branded rate.', [
      { path: '/cashbackRateBps', message: 'cashbackRateBps and brandedRateBps cannot both be 0' },
    ]);
  }
  if (offer.endsAt !== null && offer.endsAt.getTime() < offer.startsAt.getTime()) {
    throw errors.validation('invalid_body', 'endsAt is before startsAt.', [
      { path: '/endsAt', message: 'must not be before startsAt' },
    ]);
  }
}

/** A column as it will be stored: the body's value when it gives one, else the stored row's. */
const mergedOf = <T>(given: T | undefined, stored: T | undefined, absent: T): T =>
  given !== undefined ? given : stored !== undefined ? stored : absent;

function mergedTerms(data: ReturnType<typeof offerData>, existing: Offer | null): MergedTerms {
  const reward = data.reward === undefined ? existing?.reward : data.reward === Prisma.DbNull ? null : data.reward;
  return {
    reward: (reward ?? null) as MergedTerms['reward'],
    maxRewardPerChgMinor: mergedOf(data.maxRewardPerChgMinor, existing?.maxRewardPerChgMinor, null),
    budgetMinor: mergedOf(data.budgetMinor, existing?.budgetMinor, null),
    fundingIssuerShareBps: mergedOf(data.fundingIssuerShareBps, existing?.fundingIssuerShareBps, 0),
    commissionRateBps: mergedOf(data.commissionRateBps, existing?.commissionRateBps, 0),
    commissionFlatMinor: mergedOf(data.commissionFlatMinor, existing?.commissionFlatMinor, 0n),
  };
}

/**
 * A cumulative offer's reward and redemption limit are what its groups' progress and rewarded
 * completions were counted by: once a group has progress, changing them would leave rewards that
 * no longer equal the completions (docs/decisions/0060-cumulative-offers.md). Start a new offer.
 */
async function refuseProgressChange(tx: Tx, existing: Offer, input: OfferInput): Promise<void> {
  const cumulative = (r: unknown) => r !== null && r !== undefined && isCumulative(r as StoredReward);
  if (!cumulative(existing.reward) && !cumulative(input.reward)) return;
  if (input.reward === undefined && input.maxRedemptionsPerChg === undefined) return;
  const progress = await tx.offerProgress.findFirst({ where: { offerId: existing.id }, select: { chgId: true } });
  if (progress)
    throw errors.conflict(
      'offer_in_progress',
      'Groups have progress on this offer: its reward and maxRedemptionsPerChg cannot change. End it and create another.',
    );
}

/** Creates an offer of the merchant, or with `id` of an existing one, updates it (import, PATCH). */
export async function saveOffer(
  db: Db,
  merchantId: string,
  input: OfferInput,
  actor: string,
  now: Date,
  id?: string,
): Promise<{ offer: Offer; created: boolean }> {
  return db.$transaction(async (tx) => {
    await getMerchant(tx, merchantId);
    const existing = id ? await tx.offer.findUnique({ where: { id } }) : null;
    if (existing && existing.merchantId !== merchantId)
      throw errors.notFound('offer_not_found', `No offer ${id} for merchant ${merchantId}.`);
    checkAudience(input);
    const data = offerData(input, existing);
    const offerId = existing?.id ?? id ?? newId('ofr');
    const merged = mergedTerms(data, existing);
    checkCumulativeTerms(merged);
    checkOffer({
      cashbackRateBps: data.cashbackRateBps ?? existing?.cashbackRateBps ?? 0,
      brandedRateBps: data.brandedRateBps ?? existing?.brandedRateBps ?? 0,
      startsAt: data.startsAt ?? existing?.startsAt ?? now,
      endsAt: data.endsAt === undefined ? (existing?.endsAt ?? null) : data.endsAt,
      cumulative: merged.reward !== null && isCumulative(merged.reward as StoredReward),
    });
    if (existing) await refuseProgressChange(tx, existing, input);
    if (existing) {
      await tx.offer.update({ where: { id: offerId }, data: { ...data, updatedAt: now } });
      if (input.mccs === null) await tx.$executeRaw`UPDATE "offer" SET "mccs" = NULL WHERE "id" = ${offerId}`;
    } else {
      if (
        !input.title ||
        input.startsAt === undefined ||
        data.cashbackRateBps === undefined ||
        data.brandedRateBps === undefined
      ) {
        throw errors.validation('invalid_body', 'A new offer needs title, a reward (or both flat rates) and startsAt.');
      }
      await tx.offer.create({
        data: {
          ...data,
          id: offerId,
          merchantId,
          title: input.title,
          cashbackRateBps: data.cashbackRateBps,
          brandedRateBps: data.brandedRateBps,
          startsAt: toInstant(input.startsAt),
          createdAt: now,
          updatedAt: now,
        },
      });
    }
    await recordAudit(
      tx,
      {
        actor,
        action: existing ? 'offer.update' : 'offer.create',
        targetId: offerId,
        details: { merchantId, ...input },
      },
      now,
    );
    return { offer: await tx.offer.findUniqueOrThrow({ where: { id: offerId } }), created: !existing };
  });
}

export async function updateOffer(
  db: Db,
  merchantId: string,
  offerId: string,
  input: OfferInput,
  actor: string,
  now: Date,
): Promise<Offer> {
  const found = await db.offer.findFirst({ where: { id: offerId, merchantId } });
  if (!found) throw errors.notFound('offer_not_found', `No offer ${offerId} for merchant ${merchantId}.`);
  return (await saveOffer(db, merchantId, input, actor, now, offerId)).offer;
}

/**
 * What each budgeted offer's budget has given in the period `at` falls in (its month, or its
 * life), from offer_budget in one statement; offers without a budget, or with nothing used yet, 0.
 */
export async function budgetUsedOf(db: Db | Tx, offers: readonly Offer[], at: Date): Promise<Map<string, number>> {
  const budgeted = offers.filter((o) => o.budgetMinor !== null);
  const used = new Map<string, number>(offers.map((o) => [o.id, 0]));
  if (budgeted.length === 0) return used;
  const ids = budgeted.map((o) => o.id);
  const periods = budgeted.map((o) => budgetPeriodKey(o.budgetPeriod as BudgetPeriod, at));
  const rows = await db.$queryRaw<Array<{ offerId: string; used: bigint }>>`
    SELECT b.offer_id AS "offerId", b.used_minor AS used
      FROM offer_budget b JOIN unnest(${ids}::text[], ${periods}::text[]) AS x(offer_id, period)
        ON b.offer_id = x.offer_id AND b.period = x.period`;
  for (const r of rows) used.set(r.offerId, fromDbMinor(r.used));
  return used;
}

/** One offer of the merchant, for the operator (404 offer_not_found for another merchant's). */
export async function findOfferAdmin(db: Db, merchantId: string, offerId: string): Promise<Offer> {
  await getMerchant(db, merchantId);
  const offer = await db.offer.findFirst({ where: { id: offerId, merchantId } });
  if (!offer) throw errors.notFound('offer_not_found', `No offer ${offerId} for merchant ${merchantId}.`);
  return offer;
}

/** A page of the merchant's offers, by startsAt then id, for the operator. */
export async function listOffersAdmin(
  db: Db,
  merchantId: string,
  query: { limit: number; cursor?: string },
): Promise<{ data: Offer[]; nextCursor: string | null }> {
  await getMerchant(db, merchantId);
  const after = decodeCursor(query.cursor, 2);
  const rows = await db.offer.findMany({
    where: {
      merchantId,
      ...(after
        ? {
            OR: [
              { startsAt: { gt: cursorDate(after[0]) } },
              { startsAt: cursorDate(after[0]), id: { gt: String(after[1]) } },
            ],
          }
        : {}),
    },
    orderBy: [{ startsAt: 'asc' }, { id: 'asc' }],
    take: query.limit + 1,
  });
  return toPage(rows, query.limit, (o) => [o.startsAt.toISOString(), o.id]);
}
