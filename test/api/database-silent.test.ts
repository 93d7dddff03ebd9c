// The API when the database host stops answering instead of refusing (a hung server, a network
// that drops packets): a TCP proxy between the API's pool and the real PostgreSQL stops
// forwarding without closing anything. Requests on pooled connections, on new ones and waiting
// for one answer 503 database_unavailable with Retry-After within the configured bounds, not
// never; when the host answers again the next requests succeed with no restart, as after a
// refused connection.
import assert from 'node:assert/strict';
import { startTestApp, newIssuer, assertError, type TestApp, type TestIssuer, type TestResponse } from '../helpers/app';
import { assertLedgerHealthy } from '../helpers/ledger';
import { groupBody } from '../helpers/groups';
import { cardOf, settledEvent } from '../helpers/events';
import { startSilentProxy, type SilentProxy } from '../helpers/silent-proxy';
import { createDb, type Db } from '../../prisma/client';
import { TokenCache } from '../../api/middleware/token-cache';
import { ANSWER_MARGIN_MS, type DatabaseTimeouts } from '../../prisma/bounded-client';

// Short bounds, so that the test takes seconds; the defaults are in core/config.ts.
const TIMEOUTS: DatabaseTimeouts = { connectTimeoutMs: 1_000, statementTimeoutMs: 1_000, transactionTimeoutMs: 5_000 };
/** The longest a request may wait for its 503: a silent pooled connection, and the event loop's slack. */
const ANSWER_BOUND_MS = TIMEOUTS.statementTimeoutMs + ANSWER_MARGIN_MS + 2_000;

describe('API on a database host that stops answering', function () {
  this.timeout(60_000);
  let proxy: SilentProxy;
  let db: Db;
  let app: TestApp;
  let issuer: TestIssuer;
  let group: any;

  before(async () => {
    proxy = await startSilentProxy();
    db = createDb(proxy.databaseUrl, 3, TIMEOUTS);
    // Tokens from the cache (as while the API listens for their changes), so that a request's
    // first statement is its own work, not the token lookup.
    const tokenCache = new TokenCache();
    tokenCache.setListening(true);
    app = await startTestApp({ db, tokenCache });
    issuer = await newIssuer(app);
    group = (await issuer.call('POST', '/api/v2/chg', groupBody())).body;
  });
  afterEach(() => proxy.speak());
  after(async () => {
    await assertLedgerHealthy(db, issuer.id);
    await app.close();
    await db.$disconnect();
    await proxy.close();
  });

  /** The answer to `send()`, which must come within `boundMs` (a hung request fails here, not at mocha's time-out). */
  const answeredWithin = async (boundMs: number, send: () => Promise<TestResponse>): Promise<TestResponse> => {
    const startedAt = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${boundMs} ms`)), boundMs);
    });
    try {
      const res = await Promise.race([send(), late]);
      assert.ok(performance.now() - startedAt < boundMs);
      return res;
    } finally {
      clearTimeout(timer);
    }
  };

  const assertUnavailable = (res: TestResponse) => {
    assertError(res, 503, 'database_unavailable');
    assert.ok(Number(res.headers.get('retry-after')) > 0, 'Retry-After');
  };

  const readGroup = () => issuer.call('GET', `/api/v2/chg/${group.id}`);

  it('answers 503 database_unavailable with Retry-After within seconds, then serves again when the host answers', async () => {
    // Every pooled connection open and idle, as on a running service.
    await Promise.all([readGroup(), readGroup(), readGroup()]);
    proxy.silence();
    // One after another: the pooled connections go silent one by one, then new ones are opened
    // and never get an answer.
    for (let i = 0; i < 5; i++) assertUnavailable(await answeredWithin(ANSWER_BOUND_MS, readGroup));
    // Readiness names the dependency that is down, within its own check bound.
    assertError(
      await answeredWithin(ANSWER_BOUND_MS, () => app.request('GET', '/readyz')),
      503,
      'database_unavailable',
    );
    proxy.speak();
    assert.equal((await answeredWithin(ANSWER_BOUND_MS, readGroup)).status, 200);
    assert.equal((await issuer.call('POST', '/api/v2/chg', groupBody())).status, 201);
    assert.equal((await app.request('GET', '/readyz')).status, 200);
  });

  it('answers every request of a burst larger than the pool, each within its bound', async () => {
    await Promise.all([readGroup(), readGroup(), readGroup()]);
    proxy.silence();
    // Ten requests for three connections: seven wait for one, and are bounded by the wait too.
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => answeredWithin(ANSWER_BOUND_MS + TIMEOUTS.connectTimeoutMs, readGroup)),
    );
    answers.forEach(assertUnavailable);
    proxy.speak();
    assert.equal((await readGroup()).status, 200);
  });

  it('fails an ingestion with 503; the event sent again after is accepted and stored once', async () => {
    const event = settledEvent(cardOf(group));
    proxy.silence();
    assertUnavailable(await answeredWithin(ANSWER_BOUND_MS, () => issuer.call('POST', '/api/v1/incoming-txn', event)));
    proxy.speak();
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', event)).status, 204);
    assert.equal(await db.ingestedEvent.count({ where: { issuerId: issuer.id, externalId: event.id } }), 1);
  });
});
