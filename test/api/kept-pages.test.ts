import assert from 'node:assert/strict';
import { keepPage, keptPageKey, keptPageOf, keptPagesSize, type KeptPage } from '../../api/catalogue/kept-pages';
import type { CatalogueOffer } from '../../api/catalogue/issuer-catalogue';

const MiB = 1024 * 1024;
const at = new Date('2026-06-15T12:00:00Z');
const page = (
  held: readonly CatalogueOffer[],
  issuerId: string,
  bytes: number,
  over: Partial<KeptPage> = {},
): KeptPage => ({
  issuerId,
  held,
  version: '1',
  state: '',
  unenrolled: [],
  fromMs: at.getTime() - 1000,
  untilMs: at.getTime() + 1000,
  body: Buffer.alloc(bytes),
  ...over,
});
const keptOf = (held: readonly CatalogueOffer[], keys: string[]) =>
  keys.filter((key) => keptPageOf(key, held, at) !== undefined);

describe('kept pages (api/catalogue/kept-pages.ts)', () => {
  it('keeps about 32 MiB of pages, dropping the one read least recently, never the one just kept', () => {
    const held: CatalogueOffer[] = [];
    for (const key of ['p1', 'p2', 'p3']) keepPage(key, page(held, 'iss_p', 10 * MiB));
    assert.deepEqual(keptOf(held, ['p1']), ['p1'], 'three of 10 MiB fit');
    // p1 was just read: the fourth drops p2, the least recently read.
    keepPage('p4', page(held, 'iss_p', 10 * MiB));
    assert.deepEqual(keptOf(held, ['p2']), []);
    assert.deepEqual(keptOf(held, ['p1', 'p3', 'p4']), ['p1', 'p3', 'p4']);
    // A page larger than the bound is kept alone until the next.
    keepPage('huge', page(held, 'iss_p', 40 * MiB));
    assert.deepEqual(keptOf(held, ['p1', 'p3', 'p4', 'huge']), ['huge']);
    assert.equal(keptPagesSize().bytes, 40 * MiB);
    keepPage('p5', page(held, 'iss_p', MiB));
    assert.deepEqual(keptOf(held, ['huge', 'p5']), ['p5']);
  });

  it('gives a page only for the catalogue it was made from and within its span of instants', () => {
    const held: CatalogueOffer[] = [];
    keepPage('span', page(held, 'iss_s', 10));
    assert.equal(keptPageOf('span', held, new Date(at.getTime() + 999))?.body.length, 10);
    assert.equal(keptPageOf('span', held, new Date(at.getTime() + 1000)), undefined, 'the span is half-open');
    assert.equal(keptPageOf('span', held, at), undefined, 'and a page found out of it is dropped');
    keepPage('other', page(held, 'iss_s', 10));
    assert.equal(keptPageOf('other', [], at), undefined);
    assert.equal(keptPageOf('other', held, at), undefined);
  });

  it("drops the pages of an issuer's older catalogue once one of its newer is kept, and nothing of another issuer's", () => {
    const older: CatalogueOffer[] = [];
    const other: CatalogueOffer[] = [];
    keepPage('a1', page(older, 'iss_a', 10));
    keepPage('b1', page(other, 'iss_b', 10));
    const before = keptPagesSize().pages;
    const newer: CatalogueOffer[] = [];
    keepPage('a2', page(newer, 'iss_a', 10));
    assert.equal(keptPagesSize().pages, before, 'a1 went as a2 came');
    assert.deepEqual(keptOf(newer, ['a1', 'a2']), ['a2']);
    assert.deepEqual(keptOf(other, ['b1']), ['b1']);
  });

  it('keys a request by each of its parts, an absent one apart from any text', () => {
    assert.notEqual(keptPageKey(['chg_1', 0, undefined]), keptPageKey(['chg_1', 0, '']));
    assert.notEqual(keptPageKey(['chg_1', 'a', 'b']), keptPageKey(['chg_1', 'a\u0000b']));
    assert.notEqual(keptPageKey(['chg_1', 50]), keptPageKey(['chg_1', '50']));
  });
});
