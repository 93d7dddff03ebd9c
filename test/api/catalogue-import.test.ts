import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startTestApp, newIssuer, assertError, type TestApp } from '../helpers/app';
import { importCatalogue, importCatalogueFile, SANDBOX_CATALOGUE_FILE } from '../../api/catalogue/import';
import { createGroup } from '../helpers/catalogue';

describe('catalogue import (sandbox catalogue)', () => {
  let app: TestApp;
  const file = JSON.parse(readFileSync(SANDBOX_CATALOGUE_FILE, 'utf8'));
  before(async () => (app = await startTestApp()));
  after(() => app.close());

  it('covers every rule with at least 20 merchants and 40 offers', () => {
    const offers = file.merchants.flatMap((m: any) => m.offers);
    assert.ok(file.merchants.length >= 20 && offers.length >= 40);
    const now = Date.now();
    const has = (pred: (o: any) => boolean) => assert.ok(offers.some(pred));
    has((o) => o.cashbackRateBps > 0 && o.brandedRateBps === 0);
    has((o) => o.cashbackRateBps === 0 && o.brandedRateBps > 0);
    has((o) => o.cashbackRateBps > 0 && o.brandedRateBps > 0);
    has((o) => o.minSpendMinor > 0);
    has((o) => o.maxRewardMinor !== null);
    has((o) => o.maxRewardPerChgMinor !== null);
    has((o) => o.mccs !== null);
    has((o) => Date.parse(o.startsAt) > now);
    has((o) => o.endsAt !== null && Date.parse(o.endsAt) < now);
    assert.ok(file.merchants.some((m: any) => !m.brandedBalance.enabled));
    assert.ok(file.merchants.some((m: any) => m.status === 'inactive'));
    assert.ok(new Set(file.merchants.map((m: any) => m.brandedBalance.availabilityDelayDays)).size > 3);
  });

  it('loads idempotently with fixed ids', async () => {
    await importCatalogueFile(app.db, SANDBOX_CATALOGUE_FILE, 'test', new Date());
    const again = await importCatalogueFile(app.db, SANDBOX_CATALOGUE_FILE, 'test', new Date());
    const offerCount = file.merchants.flatMap((m: any) => m.offers).length;
    assert.deepEqual(again, {
      merchants: { created: 0, updated: file.merchants.length, skipped: 0 },
      offers: { created: 0, updated: offerCount, skipped: 0 },
    });
    // What `npm start` does on every start: nothing to add, nothing written, nothing audited.
    const auditBefore = await app.db.operatorAuditLog.count();
    const onStart = await importCatalogueFile(app.db, SANDBOX_CATALOGUE_FILE, 'test', new Date(), {
      onlyMissing: true,
    });
    assert.deepEqual(onStart, {
      merchants: { created: 0, updated: 0, skipped: file.merchants.length },
      offers: { created: 0, updated: 0, skipped: offerCount },
    });
    assert.equal(await app.db.operatorAuditLog.count(), auditBefore);
    const issuer = await newIssuer(app);
    const chgId = await createGroup(issuer);
    const blueBottle = file.merchants[0];
    const res = await issuer.call('GET', `/api/v2/chg/${chgId}/merchant/${blueBottle.id}/offers`);
    assert.deepEqual(res.body.data.map((o: any) => o.id).sort(), blueBottle.offers.map((o: any) => o.id).sort());
  });

  it('rejects an invalid file without writing', async () => {
    await assert.rejects(
      importCatalogue(app.db, { merchants: [{ id: 'mp_x', name: 'x', category: 'y' }] }, 'test', new Date()),
      /mp_ id/,
    );
    const err = await importCatalogue(
      app.db,
      { merchants: [{ id: `mp_${crypto.randomUUID()}`, name: 'x' }] },
      'test',
      new Date(),
    ).catch((e) => e);
    assert.equal(err.reasonCode, 'invalid_body');
    assertError({ status: err.status, body: err.toBody(), text: '', headers: new Headers() }, 400, 'invalid_body');
  });
});
