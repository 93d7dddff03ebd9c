// The API when PostgreSQL ends its connections (pg_terminate_backend, as a restart or a failover
// does): the request whose transaction or statement was cut answers 503 database_unavailable
// with Retry-After, an export already streaming is cut before its checksum line, idle pooled
// connections are replaced unnoticed, and the process lives on (an unheard 'error' on a pg client
// would end this test run) and answers the next request.
import assert from 'node:assert/strict';
import http from 'node:http';
import { startTestApp, newIssuer, assertError, type TestApp, type TestIssuer } from '../helpers/app';
import { assertLedgerHealthy, chgId as newChgId, merchantId as newMerchantId } from '../helpers/ledger';
import { bulkCashbackEarned } from '../helpers/reward-fixtures';
import { groupBody } from '../helpers/groups';
import { cardOf, settledEvent } from '../helpers/events';
import {
  lockTable,
  namedDatabaseUrl,
  terminateApplication,
  terminateApplicationQuery,
  terminateBlockedBy,
} from '../helpers/backends';
import { createDb, type Db } from '../../prisma/client';

const APPLICATION = 'api_blip_test';

describe('API on a database that ends its connections', () => {
  let db: Db;
  let app: TestApp;
  let issuer: TestIssuer;

  before(async () => {
    db = createDb(namedDatabaseUrl(APPLICATION), 10);
    app = await startTestApp({ db });
    issuer = await newIssuer(app);
  });
  after(async () => {
    await assertLedgerHealthy(db, issuer.id);
    await app.close();
    await db.$disconnect();
  });

  const assertAlive = async () => {
    assert.equal((await app.request('GET', '/healthz')).status, 200);
    assert.equal((await issuer.call('POST', '/api/v2/chg', groupBody())).status, 201);
  };

  /** Sends `send()` while `table` is locked, ends the connection it waits in, then lets go. */
  const cutWhileBlocked = async <T>(table: string, send: () => Promise<T>): Promise<T> => {
    const lock = await lockTable(table);
    try {
      const answer = send();
      await terminateBlockedBy(lock.pid);
      return await answer;
    } finally {
      await lock.release();
    }
  };

  it('answers 503 database_unavailable with Retry-After when a transaction is cut (group upsert)', async () => {
    const res = await cutWhileBlocked('cardholder_group', () => issuer.call('POST', '/api/v2/chg', groupBody()));
    assertError(res, 503, 'database_unavailable');
    assert.ok(Number(res.headers.get('retry-after')) > 0, 'Retry-After');
    await assertAlive();
  });

  it('answers 503 database_unavailable with Retry-After when an ingestion statement is cut', async () => {
    const group = (await issuer.call('POST', '/api/v2/chg', groupBody())).body;
    const event = settledEvent(cardOf(group));
    const res = await cutWhileBlocked('ingested_event', () => issuer.call('POST', '/api/v1/incoming-txn', event));
    assertError(res, 503, 'database_unavailable');
    assert.ok(Number(res.headers.get('retry-after')) > 0, 'Retry-After');
    // Nothing was acknowledged, so the issuer sends it again, and it is stored once.
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', event)).status, 204);
  });

  it('replaces idle pooled connections the server ended, without a failed request', async () => {
    await assertAlive();
    assert.ok((await terminateApplication(APPLICATION, 'idle')) > 0);
    await assertAlive();
  });

  it('cuts an export already streaming when its connection is ended, before the checksum line', async () => {
    const start = new Date(Date.now() - 3_600_000);
    await bulkCashbackEarned(
      db,
      { issuerId: issuer.id, chgId: newChgId(), merchantId: newMerchantId() },
      30_000,
      start,
      10,
    );
    const from = new Date(start.getTime() - 60_000).toISOString();
    const to = new Date(start.getTime() + 3_600_000).toISOString();
    const url = new URL(`/api/v2/reward-events/export?from=${from}&to=${to}`, app.url);
    const outcome = await new Promise<{ status?: number; text: string; cut: boolean }>((resolve, reject) => {
      const parts: Buffer[] = [];
      const done = (cut: boolean, status?: number) => resolve({ status, text: Buffer.concat(parts).toString(), cut });
      http
        .get(url, { headers: { authorization: `Bearer ${issuer.token}` } }, (res) => {
          // A slow reader: one chunk, then nothing until the export's connection is gone.
          res.once('data', (first: Buffer) => {
            parts.push(first);
            res.pause();
            terminateApplicationQuery(APPLICATION, '%reward_event%').then(() => {
              res.on('data', (part: Buffer) => parts.push(part));
              res.resume();
            }, reject);
          });
          res.on('end', () => done(false, res.statusCode));
          res.on('aborted', () => done(true, res.statusCode));
          res.on('error', () => done(true, res.statusCode));
        })
        .on('error', () => done(true));
    });
    assert.equal(outcome.status, 200);
    assert.ok(outcome.cut, 'the response is cut, not ended');
    assert.doesNotMatch(outcome.text, /"record":"checksum"/, 'no checksum line: the reader knows it is incomplete');
    await assertAlive();
  });
});
