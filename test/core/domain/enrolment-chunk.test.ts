// The enrolment run's set-based statement (core/domain/enrolment-chunk.ts) against the rules it
// copies, on the real PostgreSQL: a few hundred groups of varied creation dates, segments and
// purchase histories at the merchant (before and after the entry, refunded in full before or
// after it, in part, at another merchant), enrolled chunk by chunk in offers of every audience
// kind and holdout; each stored row must be what decideEnrolment (core/rules/audience.ts and
// core/rules/holdout.ts) decides for that group, word for word.
import assert from 'node:assert/strict';
import { createDb, type Db } from '../../../prisma/client';
import type { Prisma } from '../../../prisma/generated/client';
import { sqlTransaction } from '../../../prisma/sql-transaction';
import { testDatabaseUrl } from '../../helpers/env';
import { DAY_MS, ledgerIssuer } from '../../helpers/ledger';
import { newId } from '../../../core/ids';
import { decideEnrolment, type TargetedOffer } from '../../../core/domain/enrolment';
import { enrolChunk, type ChunkOffer } from '../../../core/domain/enrolment-chunk';
import type { Audience } from '../../../core/rules/audience';

const STARTS = Date.parse('2026-06-01T12:00:00.000Z');
const GROUPS = 320;
const SEGMENTS = ['premium', 'student', 'basic', 'vip'];

/** A fixed-seed generator (mulberry32): the same groups on every run. */
function seeded(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const AUDIENCES: Array<{ audience: Audience | null; holdoutBps: number }> = [
  { audience: null, holdoutBps: 1000 },
  { audience: { segments: ['premium', 'vip'] }, holdoutBps: 5000 },
  { audience: { excludeSegments: ['student', 'basic'] }, holdoutBps: 0 },
  { audience: { segments: ['premium', 'basic'], excludeSegments: ['vip', 'student'] }, holdoutBps: 2500 },
  { audience: { merchantHistory: { kind: 'new', lookbackDays: 30 } }, holdoutBps: 1000 },
  { audience: { merchantHistory: { kind: 'lapsed', lookbackDays: 30 } }, holdoutBps: 0 },
  { audience: { merchantHistory: { kind: 'existing', lookbackDays: 90 } }, holdoutBps: 3000 },
  {
    audience: { segments: ['premium'], excludeSegments: ['basic'], merchantHistory: { kind: 'new', lookbackDays: 7 } },
    holdoutBps: 5000,
  },
  { audience: { segments: [] }, holdoutBps: 0 },
];

describe('core/domain/enrolment-chunk: the run decides as the TypeScript rules do', function () {
  this.timeout(120_000);
  let db: Db;
  let issuerId: string;
  let merchantId: string;
  const groups: Array<{ id: string; issuerId: string; createdAt: Date; segments: string[] }> = [];

  before(async () => {
    db = createDb(testDatabaseUrl(), 5);
    issuerId = await ledgerIssuer(db);
    merchantId = newId('mp');
    const elsewhere = newId('mp');
    for (const id of [merchantId, elsewhere])
      await db.merchant.create({ data: { id, issuerIds: [issuerId], name: `enrolment ${id}`, category: 'retail' } });
    const random = seeded(52);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)];
    for (let i = 0; i < GROUPS; i++) {
      const createdAt = new Date(STARTS + Math.round((random() * 200 - 140) * DAY_MS));
      const segments = SEGMENTS.filter(() => random() < 0.3);
      const id = newId('chg');
      groups.push({ id, issuerId, createdAt, segments });
      await db.cardholderGroup.create({
        data: { id, issuerId, createdAt, segments, externalId: id, status: 'active' },
      });
      const purchases = Math.floor(random() * 4);
      for (let p = 0; p < purchases; p++) {
        const at = new Date(STARTS + Math.round((random() * 260 - 200) * DAY_MS));
        const refund = pick(['none', 'none', 'full-before', 'full-after', 'part', 'other-currency']);
        await purchase(id, random() < 0.85 ? merchantId : elsewhere, at, refund);
      }
    }
  });
  after(async () => db?.$disconnect());

  async function purchase(chgId: string, merchant: string, at: Date, refund: string): Promise<void> {
    const id = newId('txn');
    const row = (eid: string, state: string, amount: number, when: Date, currency = 'usd', related?: string) =>
      db.$executeRaw`
        INSERT INTO ingested_event (id, issuer_id, kind, external_id, fingerprint, state, payload, chg_id, cardholder_id,
          card_id, amount_minor, currency, event_created_at, workflow_id, merchant_id, related_event_id)
        VALUES (${eid}, ${issuerId}, 'settled', ${eid}, 'f', ${state}, '{}', ${chgId}, 'ch', 'card', ${amount}, ${currency},
                ${when}, ${`txn/${eid}`}, ${merchant}, ${related ?? null})`;
    await row(id, 'settled', 5000, at);
    const later = (days: number) => new Date(at.getTime() + days * DAY_MS);
    if (refund === 'full-before') await row(newId('txn'), 'refunded', 5000, later(1), 'usd', id);
    if (refund === 'full-after') await row(newId('txn'), 'refunded', 5000, later(120), 'usd', id);
    if (refund === 'part') await row(newId('txn'), 'refunded', 2000, later(1), 'usd', id);
    if (refund === 'other-currency') await row(newId('txn'), 'refunded', 5000, later(1), 'eur', id);
  }

  for (const [n, { audience, holdoutBps }] of AUDIENCES.entries())
    it(`stores what decideEnrolment decides: ${JSON.stringify(audience)}, holdout ${holdoutBps} bps`, async () => {
      const offerId = newId('ofr');
      await db.offer.create({
        data: {
          id: offerId,
          merchantId,
          title: `enrolment ${n}`,
          cashbackRateBps: 500,
          brandedRateBps: 0,
          startsAt: new Date(STARTS),
          activation: 'opt_in',
          audience: audience === null ? undefined : (audience as Prisma.InputJsonObject),
          holdoutBps,
        },
      });
      const offer: ChunkOffer = {
        id: offerId,
        merchantId,
        startsAt: new Date(STARTS),
        activation: 'opt_in',
        audience,
        holdoutBps,
        issuerIds: [issuerId],
      };
      // A group enrolled before the run keeps its row, whatever the run would decide.
      const first = groups[0];
      await db.offerEnrolment.create({
        data: { offerId, chgId: first.id, issuerId, inAudience: false, enteredAt: first.createdAt, detail: 'kept' },
      });
      let after = '';
      let chunks = 0;
      let stored = 0;
      for (;;) {
        const chunk = await sqlTransaction(db, (tx) => enrolChunk(tx, offer, { after, limit: 64 }, new Date()));
        chunks += 1;
        stored += chunk.treated + chunk.control + chunk.outside;
        if (chunk.groupsSeen < 64 || chunk.lastChgId === null) break;
        after = chunk.lastChgId;
      }
      assert.ok(chunks >= GROUPS / 64, `${chunks} chunks`);
      assert.equal(stored, GROUPS - 1, 'every group but the one enrolled before');
      const rows = await db.offerEnrolment.findMany({ where: { offerId } });
      assert.equal(rows.length, GROUPS);
      const byGroup = new Map(rows.map((r) => [r.chgId, r]));
      assert.equal(byGroup.get(first.id)?.detail, 'kept');
      const targeted: TargetedOffer = offer;
      const arms = { in: 0, out: 0, control: 0, history: 0 };
      await sqlTransaction(db, async (tx) => {
        for (const group of groups.slice(1)) {
          const expected = await decideEnrolment(tx, group, targeted);
          const row = byGroup.get(group.id)!;
          assert.deepEqual(
            { inAudience: row.inAudience, arm: row.arm, enteredAt: row.enteredAt, detail: row.detail },
            {
              inAudience: expected.inAudience,
              arm: expected.arm,
              enteredAt: expected.enteredAt,
              detail: expected.detail,
            },
            group.id,
          );
          arms[expected.inAudience ? 'in' : 'out'] += 1;
          if (expected.arm === 'control') arms.control += 1;
          if (/its last purchase/.test(expected.detail)) arms.history += 1;
        }
      });
      // The drawn groups exercise the rule: both sides of the audience, and a control where there is a holdout.
      if (audience?.segments?.length !== 0) assert.ok(arms.in > 0, JSON.stringify(arms));
      if (audience !== null) assert.ok(arms.out > 0, JSON.stringify(arms));
      if (holdoutBps >= 1000 && audience?.merchantHistory?.lookbackDays !== 7)
        assert.ok(arms.control > 0, JSON.stringify(arms));
      if (audience?.merchantHistory) assert.ok(arms.history > 0, JSON.stringify(arms));
    });
});
