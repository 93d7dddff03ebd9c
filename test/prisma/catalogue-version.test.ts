// The catalogue's version (migration 20261202170000): the number the group offer list's cache
// is good for (decision 0050). It must move with every committed change of an offer or a
// merchant, once per transaction, at its commit and not before, and with nothing else.
import assert from 'node:assert/strict';
import pg from 'pg';
import { testDatabaseUrl } from '../helpers/env';
import { uniq } from '../helpers/groups';

describe('catalogue version', () => {
  let writer: pg.Client;
  let reader: pg.Client;
  before(async () => {
    writer = new pg.Client({ connectionString: testDatabaseUrl() });
    reader = new pg.Client({ connectionString: testDatabaseUrl() });
    await Promise.all([writer.connect(), reader.connect()]);
  });
  after(() => Promise.all([writer.end(), reader.end()]));

  const version = async () =>
    BigInt(
      (await reader.query<{ v: string }>('SELECT version::text AS v FROM catalogue_version WHERE id = 1')).rows[0].v,
    );

  async function newMerchant(): Promise<string> {
    const id = `mp_${uniq('cv')}`;
    await writer.query(
      // Seen by no issuer: other tests' lists never meet it.
      `INSERT INTO merchant (id, issuer_ids, name, category, status, created_at, updated_at)
       VALUES ($1, ARRAY['iss_nobody'], $1, 'dining', 'active', now(), now())`,
      [id],
    );
    return id;
  }

  it('moves once per transaction that changes merchants or offers, however many rows', async () => {
    const before = await version();
    await writer.query('BEGIN');
    const ids = [await newMerchant(), await newMerchant(), await newMerchant()];
    await writer.query(`UPDATE merchant SET name = name || '!' WHERE id = ANY ($1)`, [ids]);
    await writer.query('COMMIT');
    assert.equal(await version(), before + 1n);
    await writer.query(`UPDATE merchant SET name = name || '?' WHERE id = $1`, [ids[0]]);
    assert.equal(await version(), before + 2n);
  });

  it('moves at the commit, not before, and not for a transaction rolled back', async () => {
    const before = await version();
    await writer.query('BEGIN');
    await newMerchant();
    assert.equal(await version(), before, 'another session sees the number only with the change');
    await writer.query('ROLLBACK');
    assert.equal(await version(), before);
    await writer.query('BEGIN');
    await newMerchant();
    await writer.query('COMMIT');
    assert.equal(await version(), before + 1n);
  });

  it('stays where it is for writes outside the catalogue', async () => {
    const before = await version();
    await writer.query(`SELECT count(*) FROM offer`);
    await writer.query(`UPDATE cardholder_group SET updated_at = updated_at WHERE false`);
    assert.equal(await version(), before);
  });
});
