// One chunk of an enrolment run (workflows/enrolment-run.ts): the next groups, in id order, of
// every issuer that sees the offer's merchant, each enrolled in the offer in ONE statement that
// decides what core/domain/enrolment.ts decides for one group at a time: the entry (the later of
// the offer's start and the group's creation), the audience as core/rules/audience.ts rules it
// (excluded segments, then segments, then the merchant history as of the entry) and the arm by
// the hash core/rules/holdout.ts takes, computed by PostgreSQL's sha256 over the same bytes. A
// million groups decided one at a time in Node would be a million round trips; in SQL a chunk is
// one. The detail each row stores is worded as the TypeScript rules word it, so a row does not
// say who stored it; test/core/domain/enrolment-chunk.test.ts holds the two to the same decisions.
//
// A group that already has a row (a purchase, a read or an earlier run stored it) keeps it: the
// insert is ON CONFLICT DO NOTHING, so a chunk retried after its commit inserts nothing twice,
// and only the rows this statement inserted are announced (offer_available, once per group and
// offer by its fact key whoever inserts the row), unless the run follows a PATCH: then also the
// groups already treated that were never announced (the offer was opt-in when they enrolled).
import { Prisma } from '../../prisma/generated/client';
import type { SqlTx } from '../../prisma/sql-transaction';
import type { Audience } from '../rules/audience';
import { HOLDOUT_BUCKETS } from '../rules/holdout';
import { factKey } from '../webhooks/fact-webhooks';
import type { TargetedOffer } from './enrolment';
import { recordFactWebhooks } from './webhook-records';

/** Groups per chunk: one statement of this many takes well under a second, and 1,000,000 groups are 100 activities. */
export const ENROLMENT_CHUNK_GROUPS = 10_000;

export interface ChunkOffer extends TargetedOffer {
  /** The merchant's issuers (null: every issuer sees it). */
  issuerIds: readonly string[] | null;
}

export interface EnrolledChunk {
  /** The last group id the chunk covered; null when it covered none. */
  lastChgId: string | null;
  /** Groups the chunk looked at (at most the limit: fewer means the end). */
  groupsSeen: number;
  treated: number;
  control: number;
  /** Groups stored outside the audience. */
  outside: number;
  /** offer_available webhooks recorded. */
  announced: number;
}

interface ChunkRow {
  lastChgId: string | null;
  groupsSeen: number;
  treated: number;
  control: number;
  outside: number;
  announce: Array<{ chgId: string; issuerId: string; offsetMs: number }> | null;
}

const iso = (column: Prisma.Sql) => Prisma.sql`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * Enrols the groups after `range.after` (up to `range.limit` of them, none past `range.upTo`) that
 * have no enrolment in the offer; `now` is the run's clock, which dates the webhooks on each
 * issuer's clock.
 */
export async function enrolChunk(
  tx: SqlTx,
  offer: ChunkOffer,
  range: { after: string; upTo?: string | null; limit: number },
  now: Date,
  options: { announceEnrolled?: boolean } = {},
): Promise<EnrolledChunk> {
  const { after: afterChgId, limit } = range;
  const upTo = range.upTo ?? null;
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit ${limit}`);
  const issuerIds = offer.issuerIds === null ? null : [...offer.issuerIds];
  const [row] = await tx.$queryRaw<ChunkRow[]>`
    WITH chunk AS (
      SELECT g.id, g.issuer_id, g.created_at, g.segments
        FROM cardholder_group g
       WHERE g.id > ${afterChgId} AND (${upTo}::text IS NULL OR g.id <= ${upTo}::text) AND g.status = 'active'
         AND (${issuerIds}::text[] IS NULL OR g.issuer_id = ANY (${issuerIds}::text[]))
       ORDER BY g.id
       LIMIT ${limit}),
    todo AS (
      SELECT c.*, greatest(${offer.startsAt}::timestamptz, c.created_at) AS entry
        FROM chunk c
       WHERE NOT EXISTS (SELECT 1 FROM offer_enrolment e WHERE e.offer_id = ${offer.id} AND e.chg_id = c.id)),
    facts AS (${factsOf(offer)}),
    decided AS (${audienceOf(offer.audience)}),
    armed AS (
      SELECT d.*,
             CASE WHEN NOT d.in_audience THEN NULL
                  WHEN ${bucketOf(offer.id)} < ${offer.holdoutBps} THEN 'control' ELSE 'treated' END AS arm
        FROM decided d),
    stored AS (
      INSERT INTO offer_enrolment (offer_id, chg_id, issuer_id, in_audience, arm, entered_at, detail, created_at)
      SELECT ${offer.id}, a.id, a.issuer_id, a.in_audience, a.arm, a.entry,
             CASE WHEN a.arm IS NULL THEN a.audience_detail
                  ELSE a.audience_detail || '; arm ' || a.arm || ' (holdout ' || ${offer.holdoutBps}::int || ' bps)' END,
             now()
        FROM armed a
      ON CONFLICT (offer_id, chg_id) DO NOTHING
      RETURNING chg_id, issuer_id, arm)
    SELECT (SELECT max(id) FROM chunk) AS "lastChgId",
           (SELECT count(*)::int FROM chunk) AS "groupsSeen",
           (SELECT count(*)::int FROM stored WHERE arm = 'treated') AS treated,
           (SELECT count(*)::int FROM stored WHERE arm = 'control') AS control,
           (SELECT count(*)::int FROM stored WHERE arm IS NULL) AS outside,
           (SELECT json_agg(json_build_object('chgId', s.chg_id, 'issuerId', s.issuer_id,
                                              'offsetMs', i.clock_offset_ms::float8))
              FROM (SELECT chg_id, issuer_id, arm FROM stored
                    UNION ALL ${options.announceEnrolled ? unannounced(offer) : Prisma.sql`SELECT NULL, NULL, NULL WHERE false`}) s
              JOIN issuer i ON i.id = s.issuer_id
             WHERE s.arm = 'treated' AND ${offer.activation} = 'auto'
               -- recordFactWebhooks writes none for an issuer that does not listen: not worth sending.
               -- Read once for the chunk (a hashed set), not once per stored row.
               AND s.issuer_id IN (SELECT ep.issuer_id FROM webhook_endpoint ep
                                    WHERE 'offer_available' = ANY (ep.enabled_types))) AS announce`;
  const announced = await announce(tx, offer, row.announce ?? [], now);
  return {
    lastChgId: row.lastChgId,
    groupsSeen: row.groupsSeen,
    treated: row.treated,
    control: row.control,
    outside: row.outside,
    announced,
  };
}

/**
 * The chunk's groups already enrolled treated (rows this statement's snapshot holds, so none it
 * inserts) with no offer_available recorded: the offer was opt-in when they enrolled, or their
 * issuer listened to no offer_available then.
 */
function unannounced(offer: ChunkOffer): Prisma.Sql {
  return Prisma.sql`
    SELECT e.chg_id, e.issuer_id, e.arm
      FROM chunk c JOIN offer_enrolment e ON e.offer_id = ${offer.id} AND e.chg_id = c.id
     WHERE e.arm = 'treated'
       AND NOT EXISTS (SELECT 1 FROM webhook w
                        WHERE w.idempotency_key = ${factKey.offerAvailable(offer.id, '')}::text || e.chg_id)`;
}

/** The group's facts: its entry, the first excluded segment it carries, its last purchase before entry. */
function factsOf(offer: ChunkOffer): Prisma.Sql {
  const audience = offer.audience;
  const excluded = audience?.excludeSegments ?? [];
  const firstExcluded =
    excluded.length === 0
      ? Prisma.sql`NULL::text`
      : Prisma.sql`(SELECT x.s FROM unnest(${[...excluded]}::text[]) WITH ORDINALITY AS x(s, n)
                     WHERE x.s = ANY (t.segments) ORDER BY x.n LIMIT 1)`;
  if (!audience?.merchantHistory)
    return Prisma.sql`SELECT t.*, ${firstExcluded} AS excluded, NULL::timestamptz AS last FROM todo t`;
  // The same purchase core/domain/enrolment.ts reads for one group: the latest settled one at the
  // merchant before the entry whose refunds dated before the entry left some of it.
  return Prisma.sql`
    SELECT t.*, ${firstExcluded} AS excluded, h.last
      FROM todo t
      LEFT JOIN LATERAL (
        SELECT max(p.event_created_at) AS last
          FROM ingested_event p
         WHERE p.issuer_id = t.issuer_id AND p.chg_id = t.id AND p.merchant_id = ${offer.merchantId}
           AND p.kind = 'settled' AND p.state = 'settled' AND p.event_created_at < t.entry
           AND p.amount_minor > coalesce((SELECT sum(r.amount_minor) FROM ingested_event r
                                           WHERE r.related_event_id = p.id AND r.issuer_id = p.issuer_id
                                             AND r.kind = 'settled' AND r.state = 'refunded'
                                             AND r.currency = p.currency AND r.event_created_at < t.entry), 0)) h ON true`;
}

/**
 * in_audience and audience_detail for every row of `facts`, rule by rule in decideAudience's
 * order: an excluded segment, then none of the segments, then the merchant history.
 */
function audienceOf(audience: Audience | null): Prisma.Sql {
  if (audience === null)
    return Prisma.sql`SELECT f.*, true AS in_audience, 'the offer has no audience: every group' AS audience_detail FROM facts f`;
  const segments = audience.segments;
  const missing = segments === undefined ? Prisma.sql`false` : Prisma.sql`NOT (f.segments && ${[...segments]}::text[])`;
  const noneDetail = `the group carries none of the segments ${(segments ?? []).join(', ')}`;
  const [historyIn, historyDetail] = historyOf(audience);
  return Prisma.sql`
    SELECT f.*,
           CASE WHEN f.excluded IS NOT NULL OR ${missing} THEN false ELSE ${historyIn} END AS in_audience,
           CASE WHEN f.excluded IS NOT NULL THEN 'the group carries the excluded segment ' || f.excluded
                WHEN ${missing} THEN ${noneDetail}::text
                ELSE ${historyDetail} END AS audience_detail
      FROM facts f`;
}

/** Whether the merchant history lets the group in, and its detail, as decideAudience words them. */
function historyOf(audience: Audience): [Prisma.Sql, Prisma.Sql] {
  const history = audience.merchantHistory;
  if (!history) {
    const detail = audience.segments
      ? `the group carries one of ${audience.segments.join(', ')}`
      : 'no rule excludes the group';
    return [Prisma.sql`true`, Prisma.sql`${detail}::text`];
  }
  const { kind, lookbackDays } = history;
  const inLookback = Prisma.sql`(f.last IS NOT NULL AND f.last >= f.entry - ${lookbackDays * 86_400_000}::bigint * interval '1 millisecond')`;
  const matches =
    kind === 'existing'
      ? inLookback
      : kind === 'lapsed'
        ? Prisma.sql`(NOT ${inLookback} AND f.last IS NOT NULL)`
        : Prisma.sql`(NOT ${inLookback})`;
  const seen = Prisma.sql`CASE WHEN f.last IS NULL THEN 'no purchase at the merchant before'
                               ELSE 'its last purchase at the merchant ' || ${iso(Prisma.sql`f.last`)} END`;
  const detail = Prisma.sql`(${`${kind} in ${lookbackDays} days before `}::text || ${iso(Prisma.sql`f.entry`)} || ': ' || ${seen})`;
  return [matches, Prisma.sql`CASE WHEN ${matches} THEN ${detail} ELSE 'not ' || ${detail} END`];
}

/** The pair's holdout bucket, as holdoutBucket computes it: the first 32 bits of the SHA-256, scaled. */
function bucketOf(offerId: string): Prisma.Sql {
  return Prisma.sql`(('x' || left(encode(sha256(convert_to('holdout:' || ${offerId}::text || ':' || d.id, 'UTF8')), 'hex'), 8))::bit(32)::bigint * ${HOLDOUT_BUCKETS}::bigint / 4294967296)`;
}

/** offer_available for the treated rows this chunk stored of an auto offer, dated on each issuer's clock. */
async function announce(
  tx: SqlTx,
  offer: ChunkOffer,
  rows: ReadonlyArray<{ chgId: string; issuerId: string; offsetMs: number }>,
  now: Date,
): Promise<number> {
  if (rows.length === 0) return 0;
  const written = await recordFactWebhooks(
    tx,
    rows.map((r) => ({
      issuerId: r.issuerId,
      type: 'offer_available' as const,
      factKey: factKey.offerAvailable(offer.id, r.chgId),
      sourceId: offer.id,
      data: { chgId: r.chgId, offerId: offer.id, merchantId: offer.merchantId },
      at: new Date(now.getTime() + r.offsetMs),
    })),
  );
  return written.length;
}

/** Fewest sampled groups for bounds worth cutting lanes at: below it, the bounds are exact. */
const LANE_SAMPLE_MIN = 200;

/**
 * Bounds that cut the active groups of these issuers (null: every issuer) into `lanes` ranges of
 * about as many groups, or none when they fit in one chunk (`chunkGroups`). A large table is cut
 * at the quantiles of a 1 % sample of its pages, which reads a hundredth of it; a smaller one
 * (fewer than LANE_SAMPLE_MIN groups in the sample) at its exact quantiles. Only the balance of
 * the lanes depends on the sample, never which groups are enrolled.
 */
export async function laneBounds(
  tx: SqlTx,
  issuerIds: readonly string[] | null,
  lanes: number,
  chunkGroups: number,
): Promise<string[]> {
  const ids = issuerIds === null ? null : [...issuerIds];
  const fractions = Array.from({ length: lanes - 1 }, (_, i) => (i + 1) / lanes);
  const quantiles = (sample: Prisma.Sql) => tx.$queryRaw<Array<{ groups: number; bounds: string[] | null }>>`
    SELECT count(*)::int AS groups, percentile_disc(${fractions}::float8[]) WITHIN GROUP (ORDER BY g.id) AS bounds
      FROM cardholder_group g ${sample}
     WHERE g.status = 'active' AND (${ids}::text[] IS NULL OR g.issuer_id = ANY (${ids}::text[]))`;
  let [row] = await quantiles(Prisma.sql`TABLESAMPLE SYSTEM (1)`);
  if (!row || row.groups < LANE_SAMPLE_MIN) {
    [row] = await quantiles(Prisma.empty);
    if (!row || row.groups <= chunkGroups) return [];
  }
  const bounds = row.bounds ?? [];
  // In the database's order already (its collation, which the chunks' id comparisons use too).
  return bounds.filter((bound, i) => bound !== null && (i === 0 || bound !== bounds[i - 1]));
}
