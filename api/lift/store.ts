// The lift report's reads (API.md, Targeted offers, "Lift report"): each arm's sufficient
// statistics (core/rules/lift.ts, ArmSpend) and its counts, aggregated per enrolled group in one
// statement, so that a million groups hand over two rows and never leave the database.
//
// A group's spend is what it bought at the offer's merchant from its entry into the offer (or
// the window's start, whichever is later) to the window's end: settled purchases, each net of the
// refunds of it in the same currency dated before the window's end, never below 0. From the entry
// because nothing before it can be the offer's doing; the arms are drawn alike, so the rule
// changes neither arm more than the other.
import { Prisma } from '../../prisma/generated/client';
import type { Db } from '../../prisma/client';
import { errors } from '../../core/errors';
import type { ArmSpend } from '../../core/rules/lift';

export interface ArmFigures extends ArmSpend {
  purchases: number;
  rewardMinor: number;
  impressions: number;
}

export interface LiftScope {
  merchantId: string;
  offerIds: readonly string[];
  issuerId?: string;
  from: Date;
  to: Date;
}

interface ArmRow {
  arm: 'treated' | 'control';
  groups: number;
  purchasers: number;
  purchases: string;
  spend: string;
  squares: string;
  impressions: string;
  reward: string;
}

const EMPTY_ARM: ArmFigures = {
  groups: 0,
  purchasers: 0,
  spendMinor: 0n,
  spendSquaredMinor: 0n,
  purchases: 0,
  rewardMinor: 0,
  impressions: 0,
};

/** Each arm's figures over the window; an arm with no enrolled group comes back empty. */
export async function armFigures(db: Db, scope: LiftScope): Promise<{ treated: ArmFigures; control: ArmFigures }> {
  if (scope.offerIds.length === 0) return { treated: EMPTY_ARM, control: EMPTY_ARM };
  const rows = await db.$queryRaw<ArmRow[]>(armsQuery(scope));
  const byArm = new Map(rows.map((r) => [r.arm, r]));
  return { treated: toFigures(byArm.get('treated')), control: toFigures(byArm.get('control')) };
}

/**
 * The statement armFigures runs (exported for EXPLAIN when sizing). Only the arms' group counts
 * read every enrolment; spend, impressions and rewards start from the merchant's purchases, the
 * offers' impressions and their rewards and look each group's enrolment up, so that the work
 * beyond one count grows with the groups that bought or saw something, not with the audience (a
 * join and a grouping of a million enrolled groups once ran past the statement time-out).
 */
export function armsQuery({ merchantId, offerIds, issuerId, from, to }: LiftScope): Prisma.Sql {
  const offers = Prisma.join(offerIds);
  const ofIssuer = (alias: string) =>
    issuerId === undefined ? Prisma.empty : Prisma.sql`AND ${Prisma.raw(alias)}.issuer_id = ${issuerId}`;
  const inArm = (alias: string) =>
    Prisma.sql`${Prisma.raw(alias)}.in_audience AND ${Prisma.raw(alias)}.arm IN ('treated', 'control')`;
  // Sums of bigint are numeric in PostgreSQL: read as text, so that nothing passes through a double.
  return Prisma.sql`
    WITH arms AS (
      SELECT e.arm, count(*)::int AS groups
        FROM offer_enrolment e
       WHERE e.offer_id IN (${offers}) AND ${inArm('e')} ${ofIssuer('e')}
       GROUP BY e.arm
    ),
    purchases AS (
      SELECT p.chg_id, p.issuer_id, p.event_created_at AS at,
             greatest(p.amount_minor - coalesce(refunds.total, 0), 0) AS net
        FROM ingested_event p
        LEFT JOIN LATERAL (
          SELECT sum(r.amount_minor) AS total FROM ingested_event r
           WHERE r.related_event_id = p.id AND r.issuer_id = p.issuer_id AND r.kind = 'settled'
             AND r.state = 'refunded' AND r.currency = p.currency AND r.event_created_at < ${to}) refunds ON true
       WHERE p.merchant_id = ${merchantId} AND p.kind = 'settled' AND p.state = 'settled'
         AND p.event_created_at >= ${from} AND p.event_created_at < ${to} ${ofIssuer('p')}
    ),
    per_buyer AS (
      SELECT e.arm, e.offer_id, e.chg_id, sum(pu.net) AS spend, count(*) FILTER (WHERE pu.net > 0) AS purchases
        FROM purchases pu
        JOIN offer_enrolment e ON e.chg_id = pu.chg_id AND e.issuer_id = pu.issuer_id AND e.offer_id IN (${offers})
                              AND ${inArm('e')} AND pu.at >= greatest(e.entered_at, ${from})
       GROUP BY e.arm, e.offer_id, e.chg_id
    ),
    bought AS (
      SELECT arm, (count(*) FILTER (WHERE spend > 0))::int AS purchasers, sum(purchases) AS purchases,
             sum(spend) AS spend, sum(spend::numeric * spend) AS squares
        FROM per_buyer GROUP BY arm
    ),
    shown AS (
      SELECT e.arm, count(*) AS n
        FROM offer_impression i
        JOIN offer_enrolment e ON e.offer_id = i.offer_id AND e.chg_id = i.chg_id AND ${inArm('e')}
       WHERE i.offer_id IN (${offers}) AND i.shown_at >= ${from} AND i.shown_at < ${to} ${ofIssuer('i')}
       GROUP BY e.arm
    ),
    paid AS (
      SELECT e.arm,
             sum(CASE WHEN w.type IN ('cashback_earned', 'branded_earned') THEN w.amount_minor
                      WHEN w.type IN ('cashback_clawed_back', 'branded_clawed_back') THEN -w.amount_minor
                      ELSE 0 END) AS amount
        FROM reward_event w
        JOIN offer_enrolment e ON e.offer_id = w.offer_id AND e.chg_id = w.chg_id AND ${inArm('e')}
       WHERE w.offer_id IN (${offers}) AND w.occurred_at >= ${from} AND w.occurred_at < ${to} ${ofIssuer('w')}
       GROUP BY e.arm
    )
    SELECT a.arm, a.groups,
           coalesce(b.purchasers, 0) AS purchasers,
           coalesce(b.purchases, 0)::text AS purchases,
           coalesce(b.spend, 0)::text AS spend,
           coalesce(b.squares, 0)::text AS squares,
           coalesce(s.n, 0)::text AS impressions,
           coalesce(pd.amount, 0)::text AS reward
      FROM arms a
      LEFT JOIN bought b ON b.arm = a.arm
      LEFT JOIN shown s ON s.arm = a.arm
      LEFT JOIN paid pd ON pd.arm = a.arm`;
}

function toFigures(row: ArmRow | undefined): ArmFigures {
  if (!row) return EMPTY_ARM;
  return {
    groups: row.groups,
    purchasers: row.purchasers,
    spendMinor: BigInt(row.spend),
    spendSquaredMinor: BigInt(row.squares),
    purchases: safe(row.purchases, 'purchases'),
    rewardMinor: safe(row.reward, 'rewardMinor'),
    impressions: safe(row.impressions, 'impressions'),
  };
}

function safe(text: string, name: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new RangeError(`${name} ${text} is not a safe integer`);
  return n;
}

export interface LiftOffer {
  id: string;
  merchantId: string;
  startsAt: Date;
}

export async function requireOffer(db: Db, offerId: string): Promise<LiftOffer> {
  const offer = await db.offer.findUnique({
    where: { id: offerId },
    select: { id: true, merchantId: true, startsAt: true },
  });
  if (!offer) throw errors.notFound('offer_not_found', `No offer ${offerId}.`);
  return offer;
}

/** The merchant's creation and offers, earliest first; 404 for a merchant that does not exist. */
export async function requireMerchantOffers(
  db: Db,
  merchantId: string,
): Promise<{ createdAt: Date; offers: LiftOffer[] }> {
  const merchant = await db.merchant.findUnique({
    where: { id: merchantId },
    select: {
      createdAt: true,
      offers: { select: { id: true, merchantId: true, startsAt: true }, orderBy: [{ startsAt: 'asc' }, { id: 'asc' }] },
    },
  });
  if (!merchant) throw errors.notFound('merchant_not_found', `No merchant ${merchantId}.`);
  return merchant;
}

/** How far the issuer's clock runs ahead (sandbox); 404 for an issuer that does not exist. */
export async function issuerClockOffsetMs(db: Db, issuerId: string): Promise<number> {
  const issuer = await db.issuer.findUnique({ where: { id: issuerId }, select: { clockOffsetMs: true } });
  if (!issuer) throw errors.notFound('issuer_not_found', `No issuer ${issuerId}.`);
  return Number(issuer.clockOffsetMs);
}
