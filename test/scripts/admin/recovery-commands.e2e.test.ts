// recover:in-flight (scripts/admin/recovery-commands.ts): a database whose purchases and webhook
// retries were in flight in a Temporal server that is then lost, as after a restore into a new
// environment (docs/operating/backup-and-restore.md). The service is started on the same
// database with a Temporal server that never saw them: nothing moves by itself; after the command
// the pending settlement is processed, the open preview lapses on its new run's timer, and the
// retrying webhook is delivered by its new retry run. A second run finds nothing in flight.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startStack, type Stack } from '../../helpers/stack';
import { startTestApp, newIssuer, type TestIssuer } from '../../helpers/app';
import { authEvent, settledEvent } from '../../helpers/events';
import { activatedMerchant, groupWithCard } from '../../helpers/scenario';
import { configureEndpoint, deliveryOf, firstEndpointId, startReceiver, waitFor } from '../../helpers/webhooks';
import { assertLedgerHealthy } from '../../helpers/ledger';
import { freshDatabase } from '../../helpers/databases';
import { testEngine } from '../../helpers/engine';
import { freePort } from '../../helpers/ports';
import { runAdminCommand } from '../../helpers/admin-cli';
import { migrate } from '../../../prisma/migrate';
import { createLogger } from '../../../core/logger';
import { handOver } from '../../../core/domain/handover';
import { createHandoverQueue } from '../../../api/ingestion/handover-queue';
import { startTemporalDevServer, type TemporalDevServerHandle } from '../../../scripts/lib/temporal-dev-server';
import { recoveryCommands } from '../../../scripts/admin/recovery-commands';

const recoverInFlight = recoveryCommands.find((c) => c.name === 'recover:in-flight')!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('recover:in-flight (scripts/admin/recovery-commands.ts)', function () {
  this.timeout(240_000);
  let databaseUrl: string;
  let lost: Stack | undefined;
  let recovered: Stack | undefined;
  let freshTemporal: TemporalDevServerHandle | undefined;
  let receiverAnswers = 500;
  const receiver = startReceiver(() => receiverAnswers);

  before(async () => {
    // A database of its own: the command hands over whatever is in flight in the whole database.
    databaseUrl = await freshDatabase('recover_in_flight');
    await migrate(databaseUrl);
  });

  after(async () => {
    await lost?.stop().catch(() => undefined);
    await recovered?.stop();
    await freshTemporal?.stop();
    await (await receiver).close();
  });

  /** Everything the lost Temporal server held: a waiting preview, a retrying webhook, a pending settlement. */
  async function inFlightBeforeTheLoss(stack: Stack, issuer: TestIssuer) {
    const { group, card } = await groupWithCard(issuer);
    const { merchant } = await activatedMerchant(stack.app, issuer, group.id, { offer: { cashbackRateBps: 1000 } });
    await configureEndpoint(issuer, (await receiver).url);

    const auth = authEvent(card, { amount: 2_000, merchantId: merchant.id });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-auth', auth)).status, 204);
    const authId = await storedId(stack, issuer.id, 'auth', auth.id);
    assert.equal(await stack.waitForStatus(authId, ['previewed', 'not_matched']), 'previewed');
    // Its qualified_auth's first attempt is refused: a retry run waits an hour.
    const webhook = await waitFor('the qualified_auth', () =>
      stack.db.webhook.findFirst({ where: { sourceEventId: authId } }).then((w) => w ?? undefined),
    );
    const endpointId = await firstEndpointId(stack.db, issuer.id);
    await waitFor('a retrying delivery', async () => {
      const delivery = await deliveryOf(stack.db, webhook.id, endpointId);
      return delivery.status === 'delivering' && delivery.relayedAt ? delivery : undefined;
    });

    // Accepted and handed over to a task queue no worker polls, so it is still pending.
    const unpolled = testEngine(stack.client, `unpolled-${randomUUID()}`);
    const logger = createLogger('silent');
    const handover = createHandoverQueue((items) => handOver({ temporal: unpolled, db: stack.db }, items), logger);
    const acceptingOnly = await startTestApp({ db: stack.db, temporal: unpolled, handover });
    const settled = settledEvent(card, { amount: 3_000, merchantId: merchant.id });
    const res = await acceptingOnly.request('POST', '/api/v1/incoming-txn', { token: issuer.token, body: settled });
    assert.equal(res.status, 204, res.text);
    const settledId = await storedId(stack, issuer.id, 'settled', settled.id);
    // Handed over (its queue row stays until a step processes it, which no worker of that queue will).
    await handover.drain();
    const { workflowId } = await stack.db.ingestedEvent.findUniqueOrThrow({ where: { id: settledId } });
    await stack.client.workflow.getHandle(workflowId).describe();
    await acceptingOnly.close();
    return { authId, settledId, webhookId: webhook.id, endpointId };
  }

  it('hands the purchases in flight and the retrying webhooks to a Temporal server that never saw them', async () => {
    lost = await startStack({ database: { url: databaseUrl }, settings: { webhookRetryScheduleMs: [3_600_000] } });
    const issuer = await newIssuer(lost.app);
    const { authId, settledId, webhookId, endpointId } = await inFlightBeforeTheLoss(lost, issuer);
    await lost.stop();
    lost = undefined;

    freshTemporal = await startTemporalDevServer({ port: await freePort() });
    recovered = await startStack({
      database: { url: databaseUrl },
      temporalAddress: freshTemporal.address,
      settings: { settlementTimeoutMs: 3_000, webhookRetryScheduleMs: [200] },
    });
    receiverAnswers = 204;
    const status = async (id: string) =>
      (await recovered!.db.ingestedEvent.findUniqueOrThrow({ where: { id } })).rewardStatus;
    await sleep(4_000);
    assert.deepEqual(
      [await status(settledId), await status(authId), (await deliveryOf(recovered.db, webhookId, endpointId)).status],
      ['pending', 'previewed', 'delivering'],
      'nothing moves without the command: no run knows them',
    );

    const [printed] = await runAdminCommand(recovered, recoverInFlight, []);
    assert.deepEqual(printed, { handedOver: 2, failed: 0, deliveriesResumed: 1, failures: [] });
    assert.equal(await recovered.waitForStatus(settledId, ['matched', 'not_matched', 'unknown']), 'matched');
    assert.equal(await recovered.waitForStatus(authId, ['lapsed', 'unknown'], 30_000), 'lapsed');
    const delivered = await waitFor('the delivery', async () => {
      const delivery = await deliveryOf(recovered!.db, webhookId, endpointId);
      return delivery.status === 'delivered' ? delivery : undefined;
    });
    assert.equal(delivered.attemptCount, 2, 'the refused first attempt, then one more');
    assert.equal(await recovered.db.ledgerTransfer.count({ where: { transactionId: settledId } }), 1);
    await assertLedgerHealthy(recovered.db);

    const [again] = await runAdminCommand(recovered, recoverInFlight, []);
    assert.deepEqual(again, { handedOver: 0, failed: 0, deliveriesResumed: 0, failures: [] });
    assert.equal(await recovered.db.operatorAuditLog.count({ where: { action: 'recovery.in_flight' } }), 2);
  });
});

async function storedId(stack: Stack, issuerId: string, kind: 'auth' | 'settled', externalId: string) {
  const row = await stack.db.ingestedEvent.findUniqueOrThrow({
    where: { issuerId_kind_externalId: { issuerId, kind, externalId } },
  });
  return row.id;
}
