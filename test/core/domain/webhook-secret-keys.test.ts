// Rotating WEBHOOK_SECRET_KEYS: endpoints sealed under the old key are re-sealed under the new
// one (npm run admin -- webhook:reencrypt), keep their secrets, and their webhooks verify once
// the old key is gone. Over a database of its own, so that its other keys meet no other test.
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { createDb, type Db } from '../../../prisma/client';
import { migrate } from '../../../prisma/migrate';
import { createIssuer } from '../../../api/issuers/store';
import { rotateSecret } from '../../../api/webhook-endpoints/store';
import { assertStoredSecretsOpen } from '../../../core/domain/webhook-secret-keys';
import { createWebhookActivities } from '../../../activities/webhooks';
import { generateKeyRingEntry, parseKeyRing } from '../../../core/crypto/key-ring';
import {
  openSecrets,
  sealSecrets,
  WebhookSecretUnreadableError,
  type PlainSecrets,
} from '../../../core/webhooks/secret-sealing';
import { generateSigningSecret } from '../../../core/webhooks/signing';
import { newId } from '../../../core/ids';
import { createLogger } from '../../../core/logger';
import { webhookCommands } from '../../../scripts/admin/webhook-commands';
import { parseArgs } from '../../../scripts/admin/command';
import { freshDatabase } from '../../helpers/databases';
import { testWebhookDestinations } from '../../helpers/env';
import { outboxWebhook, startReceiver, type Receiver } from '../../helpers/webhooks';

const [OLD, NEW] = [generateKeyRingEntry('old'), generateKeyRingEntry('new')];
const ring = (value: string) => parseKeyRing('WEBHOOK_SECRET_KEYS', value).ring!;
const oldOnly = ring(OLD);
const rotating = ring(`${NEW},${OLD}`);
const newOnly = ring(NEW);

describe('core/domain/webhook-secret-keys: rotating the key that seals webhook secrets', function () {
  this.timeout(60_000);
  let db: Db;
  let receiver: Receiver;
  const endpoints = new Map<string, PlainSecrets>();
  const endpointIds = new Map<string, string>();

  before(async () => {
    const url = await freshDatabase('secret_keys');
    await migrate(url);
    db = createDb(url, 2);
    receiver = await startReceiver();
    // Three endpoints sealed under the old key, one of them mid-rotation of its signing secret.
    for (let i = 0; i < 3; i++) {
      const issuer = await createIssuer(db, { name: `Issuer ${i}`, environment: 'sandbox' }, 'test', new Date());
      const secret = generateSigningSecret();
      const sealed = sealSecrets(oldOnly, issuer.id, { secret, previousSecret: null });
      const endpointId = newId('whe');
      await db.webhookEndpoint.create({
        data: {
          id: endpointId,
          issuerId: issuer.id,
          url: receiver.url,
          enabledTypes: ['qualified_settlement'],
          ...sealed,
          createdAt: new Date(),
          updatedAt: new Date(),
        },
      });
      endpoints.set(issuer.id, { secret, previousSecret: null });
      endpointIds.set(issuer.id, endpointId);
    }
    const [rotatedId, before] = [...endpoints][0];
    const { signingSecret } = await rotateSecret(db, oldOnly, rotatedId, new Date());
    endpoints.set(rotatedId, { secret: signingSecret, previousSecret: before.secret });
  });
  after(async () => {
    await db?.$disconnect();
    await receiver?.close();
  });

  const reencrypt = async (keys = rotating) => {
    const printed: any[] = [];
    await webhookCommands
      .find((c) => c.name === 'webhook:reencrypt')!
      .run(parseArgs(['--page-size', '2']), {
        db,
        actor: 'cli:test',
        now: new Date(),
        print: (v) => printed.push(v),
        temporal: async () => assert.fail('no Temporal needed'),
        webhookSecretKeys: () => keys,
      });
    return printed[0];
  };

  it('refuses to start without a key that endpoints are sealed under, naming it', async () => {
    await assert.rejects(
      assertStoredSecretsOpen(db, newOnly),
      /WEBHOOK_SECRET_KEYS lacks key id\(s\) that webhook secrets are sealed under: "old" \(3 endpoints\)/,
    );
    await assertStoredSecretsOpen(db, rotating);
  });

  it('re-seals every endpoint under the first key, page by page, audited, and keeps every secret', async () => {
    const result = await reencrypt();
    assert.deepEqual(
      { ...result, next: undefined },
      { primaryKeyId: 'new', reencrypted: 3, changedMeanwhile: 0, keyIds: { new: 3 }, next: undefined },
    );
    assert.match(result.next, /every endpoint is sealed under "new": older keys may be dropped/);
    for (const row of await db.webhookEndpoint.findMany()) {
      assert.equal(row.secretKeyId, 'new');
      assert.deepEqual(openSecrets(newOnly, row.issuerId, row), endpoints.get(row.issuerId));
      assert.throws(
        () => openSecrets(oldOnly, row.issuerId, row),
        (err: Error) => err instanceof WebhookSecretUnreadableError && /key id "new" is not among/.test(err.message),
      );
    }
    const audit = await db.operatorAuditLog.findMany({ where: { action: 'webhook.secrets.reencrypt' } });
    assert.deepEqual(
      audit.map((a) => [a.actor, a.details]),
      [['cli:test', { primaryKeyId: 'new', reencrypted: 3, changedMeanwhile: 0 }]],
    );
    await assertStoredSecretsOpen(db, newOnly);
  });

  it('does nothing the second time', async () => {
    const again = await reencrypt();
    assert.deepEqual([again.reencrypted, again.changedMeanwhile, again.keyIds], [0, 0, { new: 3 }]);
    assert.equal(
      await db.operatorAuditLog.count({ where: { action: 'webhook.secrets.reencrypt' } }),
      1,
      'nothing changed, nothing audited',
    );
  });

  it('signs with the same secrets under the new key alone, both during a rotation overlap', async () => {
    const activities = createWebhookActivities({
      db,
      logger: createLogger('silent'),
      clock: { now: () => new Date() },
      webhookDestinations: testWebhookDestinations,
      webhookSecretKeys: newOnly,
    });
    for (const [issuerId, plain] of endpoints) {
      const webhookId = await outboxWebhook(db, issuerId);
      const result = await activities.attemptWebhookDelivery({
        webhookId,
        endpointId: endpointIds.get(issuerId)!,
        attemptNumber: 1,
        nextAttemptInMs: null,
        replay: false,
      });
      assert.equal(result.outcome, 'succeeded', JSON.stringify(result));
      const request = receiver.requests.find((r) => r.headers['webhook-id'] === webhookId)!;
      for (const secret of [plain.secret, plain.previousSecret].filter((s) => s !== null)) {
        assert.doesNotThrow(() => new Webhook(secret).verify(request.body, request.headers as Record<string, string>));
      }
    }
  });

  it('rotates a signing secret under the new key, and refuses a key ring missing the key it was sealed under', async () => {
    const [issuerId, plain] = [...endpoints][1];
    const { signingSecret } = await rotateSecret(db, newOnly, issuerId, new Date());
    const row = await db.webhookEndpoint.findUniqueOrThrow({ where: { id: endpointIds.get(issuerId)! } });
    assert.deepEqual(openSecrets(newOnly, issuerId, row), { secret: signingSecret, previousSecret: plain.secret });
    await assert.rejects(rotateSecret(db, oldOnly, issuerId, new Date()), WebhookSecretUnreadableError);
  });
});
