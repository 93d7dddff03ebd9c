// A seeded random walk of earn, spend, expire and clawback operations over a few groups
// and merchants. After every step the ledger invariants hold and no balance is negative.
// Seeded (not Math.random) so a failure reproduces: the seed is in the test name.
import assert from 'node:assert/strict';
import { createDb, type Db } from '../../../../prisma/client';
import { testDatabaseUrl } from '../../../helpers/env';
import { assertLedgerHealthy, at, chgId, key, ledgerIssuer, merchantId, plusDays } from '../../../helpers/ledger';
import {
  clawBackBranded,
  earnBranded,
  expireGrant,
  inTransaction,
  listExpiredGrants,
  postTransfer,
  spendBranded,
  trialBalance,
} from '../../../../core/domain/ledger';
import { isLedgerError, LEDGER_INSUFFICIENT_BALANCE } from '../../../../core/ledger';

/** mulberry32: tiny, fast, good enough to pick test operations. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SEEDS = [1, 42, 20261122];
const STEPS = 40;

describe('core/domain/ledger random operation sequences', () => {
  let db: Db;
  before(() => (db = createDb(testDatabaseUrl(), 10)));
  after(() => db.$disconnect());

  for (const seed of SEEDS) {
    it(`keeps every invariant after each of ${STEPS} operations (seed ${seed})`, async () => {
      const rand = prng(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
      const amount = () => 1 + Math.floor(rand() * 500);
      const issuerId = await ledgerIssuer(db);
      const groups = [chgId(), chgId()];
      const merchants = [merchantId(), merchantId()];
      const grantsByParty = new Map<string, string[]>();
      let now = at();

      for (let step = 0; step < STEPS; step++) {
        now = plusDays(now, Math.floor(rand() * 4));
        const p = { issuerId, chgId: pick(groups), merchantId: pick(merchants), at: now };
        const party = `${p.chgId}/${p.merchantId}`;
        const op = pick([
          'earn_cashback',
          'clawback_cashback',
          'earn_branded',
          'spend',
          'clawback_branded',
          'expire',
          'replay',
        ] as const);
        await inTransaction(db, async (tx) => {
          switch (op) {
            case 'earn_cashback':
              return postTransfer(tx, { ...p, kind: 'earn_cashback', amountMinor: amount(), idempotencyKey: key() });
            case 'clawback_cashback':
              // May exceed the balance: then it must fail typed and write nothing.
              return postTransfer(tx, {
                ...p,
                kind: 'clawback_cashback',
                amountMinor: amount(),
                idempotencyKey: key(),
              }).catch((e) => {
                if (!isLedgerError(e, LEDGER_INSUFFICIENT_BALANCE)) throw e;
              });
            case 'earn_branded': {
              const r = await earnBranded(tx, {
                ...p,
                amountMinor: amount(),
                idempotencyKey: key(),
                availableAt: plusDays(now, pick([0, 2])),
                expiresAt: plusDays(now, pick([3, 10, 30])),
              });
              grantsByParty.set(party, [...(grantsByParty.get(party) ?? []), r.grant.id]);
              return r;
            }
            case 'spend':
              return spendBranded(tx, { ...p, maxAmountMinor: amount(), idempotencyKey: key() });
            case 'clawback_branded': {
              const grants = grantsByParty.get(party) ?? [];
              if (grants.length === 0) return;
              return clawBackBranded(tx, {
                ...p,
                maxAmountMinor: amount(),
                grantIds: [pick(grants)],
                idempotencyKey: key(),
              });
            }
            case 'expire': {
              const due = await listExpiredGrants(tx, { at: now, limit: 5, issuerId });
              for (const g of due) await expireGrant(tx, { issuerId, grantId: g.id, at: now });
              return;
            }
            case 'replay': {
              // The same earn twice in one transaction: the second posts nothing.
              const k = key();
              await postTransfer(tx, { ...p, kind: 'earn_cashback', amountMinor: 5, idempotencyKey: k });
              const again = await postTransfer(tx, { ...p, kind: 'earn_cashback', amountMinor: 5, idempotencyKey: k });
              assert.equal(again.created, false);
            }
          }
        });
        await assertLedgerHealthy(db, issuerId);
        const tb = await trialBalance(db, { issuerId });
        assert.equal(tb.totalMinor, 0, `step ${step} (${op})`);
        for (const a of tb.accounts)
          assert.ok(a.balanceMinor >= 0, `step ${step} (${op}): ${a.id} at ${a.balanceMinor}`);
      }
    });
  }
});
