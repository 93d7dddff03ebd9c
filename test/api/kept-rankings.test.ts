import assert from 'node:assert/strict';
import { keepHistory, keptHistoryOf } from '../../api/catalogue/kept-rankings';
import type { CatalogueOffer } from '../../api/catalogue/issuer-catalogue';

// Held catalogues stand in by their length alone: what the bound counts.
const catalogue = (offers: number) => new Array<CatalogueOffer>(offers);
const kept = (held: readonly CatalogueOffer[], chgIds: string[]) =>
  chgIds.filter((chgId) => keptHistoryOf(held, chgId) !== undefined);

describe('kept rankings (api/catalogue/kept-rankings.ts)', () => {
  it('keeps about a million offer places, dropping the group read least recently', () => {
    const held = catalogue(300_000);
    for (const chgId of ['chg_k1', 'chg_k2', 'chg_k3']) keepHistory(held, 'iss_k', chgId, '1', []);
    assert.deepEqual(kept(held, ['chg_k1']), ['chg_k1'], 'three of 300,000 places fit');
    // chg_k1 was just read: the fourth group drops chg_k2, the least recently read.
    keepHistory(held, 'iss_k', 'chg_k4', '1', []);
    assert.deepEqual(kept(held, ['chg_k2']), []);
    assert.deepEqual(kept(held, ['chg_k1', 'chg_k3', 'chg_k4']), ['chg_k1', 'chg_k3', 'chg_k4']);
    assert.equal(keptHistoryOf(held, 'chg_k4')?.stamp, '1');
  });

  it("drops what was kept for an issuer's older catalogue, and nothing of another issuer's", () => {
    const older = catalogue(10);
    const other = catalogue(10);
    keepHistory(older, 'iss_a', 'chg_a1', '3', []);
    keepHistory(older, 'iss_a', 'chg_a2', '5', []);
    keepHistory(other, 'iss_b', 'chg_b1', '7', []);
    const newer = catalogue(10);
    keepHistory(newer, 'iss_a', 'chg_a3', '1', []);
    assert.deepEqual(kept(older, ['chg_a1', 'chg_a2']), []);
    assert.deepEqual(kept(newer, ['chg_a3']), ['chg_a3']);
    assert.deepEqual(kept(other, ['chg_b1']), ['chg_b1']);
    // Asked for under another catalogue than its own, a group's kept history is of no use, and goes.
    assert.equal(keptHistoryOf(newer, 'chg_b1'), undefined);
    assert.equal(keptHistoryOf(other, 'chg_b1'), undefined);
  });
});
