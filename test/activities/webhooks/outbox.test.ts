// The relay's claim of the outbox (activities/webhooks/outbox.ts), on the real database: a few
// deliveries of every endpoint with work waiting, however long one endpoint's backlog; a tripped
// endpoint (its last attempts all failed) one probe per interval; a disabled one's deliveries
// all, to be skipped.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createDb, type Db } from '../../../prisma/client';
import { createIssuer } from '../../../api/issuers/store';
import { recordWebhook } from '../../../core/domain/webhook-records';
import { claimOutbox, isTripped } from '../../../activities/webhooks/outbox';
import { PROBE_INTERVAL_MS, TRIP_AFTER_FAILURES } from '../../../core/webhooks/endpoint-health';
import { testDatabaseUrl } from '../../helpers/env';
import { insertEndpoint, settlementData } from '../../helpers/webhooks';

describe('claimOutbox (per endpoint, with tripped endpoints probed)', function () {
  this.timeout(60_000);
  let db: Db;
  before(() => {
    db = createDb(testDatabaseUrl(), 3);
  });
  const made: string[] = [];
  after(async () => {
    // Done with: no relay of a later test may take these deliveries to a host that is not there.
    await db?.webhookDelivery.updateMany({ where: { endpointId: { in: made } }, data: { relayedAt: new Date() } });
    await db?.$disconnect();
  });

  /** An issuer with one endpoint and `n` webhooks for it, written unclaimed. */
  async function endpointWithBacklog(n: number): Promise<string> {
    const issuer = await createIssuer(db, { name: 'Claim test', environment: 'sandbox' }, 'test', new Date());
    const endpointId = await insertEndpoint(db, issuer.id, 'https://hooks.example.com/claim', {
      enabledTypes: ['qualified_settlement'],
    });
    made.push(endpointId);
    for (let i = 0; i < n; i++)
      await db.$transaction((tx) =>
        recordWebhook(tx, {
          issuerId: issuer.id,
          type: 'qualified_settlement',
          sourceEventId: `txn_${randomUUID()}`,
          at: new Date(),
          data: settlementData(),
        }),
      );
    return endpointId;
  }

  const claim = async (endpoints: string[]) => {
    // Only this test's endpoints: every other one is skipped, as a relay skips busy ones.
    const others = await db.webhookEndpoint.findMany({ where: { id: { notIn: endpoints } }, select: { id: true } });
    return claimOutbox(db, { limit: 50, perEndpoint: 4, claimMs: 10_000, skipEndpoints: others.map((e) => e.id) });
  };

  it('takes up to perEndpoint of each endpoint, a long backlog included', async () => {
    const [long, short] = [await endpointWithBacklog(30), await endpointWithBacklog(2)];
    const rows = await claim([long, short]);
    const count = (id: string) => rows.filter((r) => r.endpointId === id).length;
    assert.deepEqual([count(long), count(short)], [4, 2]);
  });

  it('takes one probe of a tripped endpoint once the interval since its last failure passed, else none', async () => {
    const endpoint = await endpointWithBacklog(10);
    const trip = (lastFailureMsAgo: number) =>
      db.webhookEndpoint.update({
        where: { id: endpoint },
        data: {
          consecutiveFailures: TRIP_AFTER_FAILURES,
          failingSince: new Date(Date.now() - 3_600_000),
          lastFailureAt: new Date(Date.now() - lastFailureMsAgo),
        },
      });
    await trip(1_000);
    assert.equal((await claim([endpoint])).length, 0, 'failed a second ago: nothing');
    await trip(PROBE_INTERVAL_MS + 1_000);
    const probes = await claim([endpoint]);
    assert.equal(probes.length, 1, 'one probe');
    assert.ok(isTripped(probes[0].state.endpoint));
  });

  it("takes every delivery of a disabled endpoint's backlog it may, to end them skipped", async () => {
    const endpoint = await endpointWithBacklog(3);
    await db.webhookEndpoint.update({
      where: { id: endpoint },
      data: { status: 'disabled', disabledReason: 'failing', disabledAt: new Date(), consecutiveFailures: 40 },
    });
    assert.equal((await claim([endpoint])).length, 3);
  });
});
