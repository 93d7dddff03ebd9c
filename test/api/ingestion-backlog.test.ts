// An issuer's backlog over HTTP (API.md, "Ingestion"): GET /api/v2/ingestion/lag, and 429
// backlog_full with Retry-After once the issuer's events waiting to be processed reach its limit,
// while another issuer's events are still accepted. The app has no hand-over here, so what it
// accepts stays waiting, as it does behind a full bound.
import assert from 'node:assert/strict';
import { assertError, newIssuer, startTestApp, type TestApp, type TestIssuer } from '../helpers/app';
import { groupBody } from '../helpers/groups';
import { cardOf, settledEvent, type CardRef } from '../helpers/events';
import { DEFAULT_INGESTION_BACKLOG_LIMIT } from '../../core/config';

describe('ingestion backlog (lag route, backlog_full)', function () {
  this.timeout(60_000);
  let app: TestApp;

  before(async () => {
    app = await startTestApp();
  });
  after(() => app.close());

  async function issuerWithCard(): Promise<{ issuer: TestIssuer; card: CardRef }> {
    const issuer = await newIssuer(app);
    const group = (await issuer.call('POST', '/api/v2/chg', groupBody())).body;
    return { issuer, card: cardOf(group) };
  }

  const limitOf = async (issuer: TestIssuer, ingestionBacklogLimit: number | null) => {
    const res = await app.operator('PATCH', `/admin/v1/issuers/${issuer.id}`, { ingestionBacklogLimit });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.ingestionBacklogLimit, ingestionBacklogLimit);
  };

  it("reports an issuer's pending events, the oldest one's age and its limit, and nothing of another issuer's", async () => {
    const { issuer, card } = await issuerWithCard();
    const other = await issuerWithCard();
    assert.deepEqual((await issuer.call('GET', '/api/v2/ingestion/lag')).body, {
      pendingEvents: 0,
      oldestPendingAgeSeconds: 0,
      waitingEvents: 0,
      waitingEventsLimit: DEFAULT_INGESTION_BACKLOG_LIMIT,
    });
    const events = [settledEvent(card), settledEvent(card)];
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', events)).status, 204);
    assert.equal((await other.issuer.call('POST', '/api/v1/incoming-txn', settledEvent(other.card))).status, 204);
    // Accepted a while ago, as a backlog's oldest event would have been.
    await app.db.handoverPending.updateMany({
      where: { issuerId: issuer.id },
      data: { queuedAt: new Date(Date.now() - 90_000) },
    });
    const lag = (await issuer.call('GET', '/api/v2/ingestion/lag')).body;
    assert.deepEqual(
      { ...lag, oldestPendingAgeSeconds: undefined },
      {
        pendingEvents: 2,
        oldestPendingAgeSeconds: undefined,
        waitingEvents: 2,
        waitingEventsLimit: DEFAULT_INGESTION_BACKLOG_LIMIT,
      },
    );
    assert.ok(lag.oldestPendingAgeSeconds >= 90 && lag.oldestPendingAgeSeconds < 120, JSON.stringify(lag));
    // An admitted event still counts as pending, no longer as waiting.
    const [first] = await app.db.handoverPending.findMany({ where: { issuerId: issuer.id } });
    await app.db.handoverPending.update({ where: { eventId: first.eventId }, data: { admittedAt: new Date() } });
    const admitted = (await issuer.call('GET', '/api/v2/ingestion/lag')).body;
    assert.deepEqual([admitted.pendingEvents, admitted.waitingEvents], [2, 1]);
  });

  it("answers 429 backlog_full with Retry-After past the issuer's limit, storing nothing, while another issuer's events are accepted", async () => {
    const { issuer, card } = await issuerWithCard();
    const other = await issuerWithCard();
    await limitOf(issuer, 3);
    assert.equal(
      (
        await issuer.call(
          'POST',
          '/api/v1/incoming-txn',
          [1, 2, 3].map(() => settledEvent(card)),
        )
      ).status,
      204,
    );

    const refused = settledEvent(card);
    const res = await issuer.call('POST', '/api/v1/incoming-txn', refused);
    assertError(res, 429, 'backlog_full');
    assert.equal(res.headers.get('retry-after'), '30');
    assert.equal(res.body.details.waitingEventsLimit, 3);
    assert.equal(
      await app.db.ingestedEvent.count({ where: { issuerId: issuer.id, externalId: refused.id } }),
      0,
      'nothing of the refused request is stored',
    );
    assert.equal((await issuer.call('GET', '/api/v2/ingestion/lag')).body.waitingEventsLimit, 3);

    assert.equal((await other.issuer.call('POST', '/api/v1/incoming-txn', settledEvent(other.card))).status, 204);

    // The operator lifts the override: the deployment's limit applies again.
    await limitOf(issuer, null);
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', refused)).status, 204);
  });

  it('accepts again once waiting events have been handed over', async () => {
    const { issuer, card } = await issuerWithCard();
    await limitOf(issuer, 2);
    assert.equal(
      (await issuer.call('POST', '/api/v1/incoming-txn', [settledEvent(card), settledEvent(card)])).status,
      204,
    );
    assertError(await issuer.call('POST', '/api/v1/incoming-txn', settledEvent(card)), 429, 'backlog_full');
    // Admitted (handed over): no longer waiting.
    await app.db.handoverPending.updateMany({ where: { issuerId: issuer.id }, data: { admittedAt: new Date() } });
    // The process reads an issuer's count at most once a second.
    await new Promise((r) => setTimeout(r, 1_100));
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', settledEvent(card))).status, 204);
  });

  it('takes a limit from 1 to 100,000,000 and refuses one out of bounds', async () => {
    const { issuer } = await issuerWithCard();
    await limitOf(issuer, 100_000_000);
    await limitOf(issuer, 1);
    for (const ingestionBacklogLimit of [0, 100_000_001, 'many'])
      assertError(
        await app.operator('PATCH', `/admin/v1/issuers/${issuer.id}`, { ingestionBacklogLimit }),
        400,
        'invalid_body',
      );
  });
});
