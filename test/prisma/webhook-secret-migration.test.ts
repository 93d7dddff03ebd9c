// A database migrated before webhook secrets were sealed: its plaintext
// secrets are sealed by the migration runner's data step, the plaintext columns dropped, and its
// webhooks still verify with the secrets the issuers hold.
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { migrate } from '../../prisma/migrate';
import { createDb, type Db } from '../../prisma/client';
import { createWebhookActivities } from '../../activities/webhooks';
import { openSecrets } from '../../core/webhooks/secret-sealing';
import { createLogger } from '../../core/logger';
import { databaseBefore } from '../helpers/databases';
import { TEST_WEBHOOK_SECRET_KEYS, testWebhookDestinations, testWebhookSecretKeys } from '../helpers/env';
import { outboxWebhook, startReceiver, type Receiver } from '../helpers/webhooks';

const FIRST_SEALED = '20261123060000_webhook_secret_encryption';
const BULK = 1_200;

/** The secret the bulk rows got, as SQL computed it: `whsec_` + base64(sha256(issuer id)). */
const bulkSecret = (issuerId: string) => `whsec_${createHash('sha256').update(issuerId).digest('base64')}`;

describe('prisma/migrations: webhook secrets stored before they were sealed', function () {
  this.timeout(120_000);
  let url: string;
  let client: pg.Client;
  let receiver: Receiver;
  const issuerId = `iss_${randomUUID()}`;
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  const previousSecret = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;

  before(async () => {
    url = await databaseBefore('secret_migration', FIRST_SEALED);
    receiver = await startReceiver();
    client = new pg.Client({ connectionString: url });
    await client.connect();
    // Written the way the old code wrote them: one endpoint mid-rotation, and enough others
    // for several of the data step's batches.
    await client.query(`INSERT INTO issuer (id, name, environment) VALUES ($1, 'Old issuer', 'sandbox')`, [issuerId]);
    await client.query(
      `INSERT INTO webhook_endpoint (issuer_id, url, enabled_types, secret, previous_secret, previous_secret_expires_at)
       VALUES ($1, $2, ARRAY['qualified_auth', 'qualified_settlement'], $3, $4, now() + interval '12 hours')`,
      [issuerId, receiver.url, secret, previousSecret],
    );
    await client.query(
      `INSERT INTO issuer (id, name, environment) SELECT 'iss_' || gen_random_uuid(), 'Bulk issuer', 'sandbox' FROM generate_series(1, ${BULK})`,
    );
    await client.query(
      `INSERT INTO webhook_endpoint (issuer_id, url, enabled_types, secret)
       SELECT id, 'https://hooks.example.com/' || id, ARRAY['qualified_settlement'], 'whsec_' || encode(sha256(convert_to(id, 'UTF8')), 'base64')
         FROM issuer WHERE name = 'Bulk issuer'`,
    );
  });
  after(async () => {
    await client?.end();
    await receiver?.close();
  });

  const applied = async () =>
    (await client.query<{ migration_name: string }>('SELECT migration_name FROM _prisma_migrations')).rows.map(
      (r) => r.migration_name,
    );
  const plaintextColumns = async () =>
    (
      await client.query(
        `SELECT column_name FROM information_schema.columns WHERE table_name = 'webhook_endpoint' AND column_name IN ('secret', 'previous_secret')`,
      )
    ).rowCount;

  it('stops, naming WEBHOOK_SECRET_KEYS, when there is no key to seal with, and drops nothing', async () => {
    await assert.rejects(
      migrate(url),
      /1201 webhook endpoint\(s\) hold plaintext signing secrets; set WEBHOOK_SECRET_KEYS/,
    );
    assert.equal(await plaintextColumns(), 2);
    assert.equal(
      (await client.query('SELECT secret FROM webhook_endpoint WHERE issuer_id = $1', [issuerId])).rows[0].secret,
      secret,
    );
    assert.ok(!(await applied()).includes('20261123060100_webhook_secret_plaintext_removal'));
  });

  it('stops a runner without the data step (prisma migrate deploy) rather than drop the secrets', async () => {
    await assert.rejects(
      migrate(url, { webhookSecretKeys: testWebhookSecretKeys, dataSteps: {} }),
      /rows hold plaintext secrets only/,
    );
    assert.equal(await plaintextColumns(), 2);
  });

  it('seals every row under the first key and drops the plaintext columns', async () => {
    const result = await migrate(url, { webhookSecretKeys: testWebhookSecretKeys });
    // The removal first; migrations written after it (any later name) follow in the same run.
    assert.equal(result.applied[0], '20261123060100_webhook_secret_plaintext_removal');
    assert.ok(result.applied.slice(1).every((name) => name > '20261123060100_webhook_secret_plaintext_removal'));
    assert.equal(await plaintextColumns(), 0);
    const { rows } = await client.query<{ issuer_id: string; row: string; secret_key_id: string }>(
      'SELECT issuer_id, e::text AS row, secret_key_id FROM webhook_endpoint e',
    );
    assert.equal(rows.length, BULK + 1);
    assert.ok(rows.every((r) => r.secret_key_id === testWebhookSecretKeys.primaryKeyId));
    const spellings = (s: string) => [
      s.slice('whsec_'.length),
      Buffer.from(s.slice('whsec_'.length), 'base64').toString('hex'),
      Buffer.from(s).toString('hex'),
    ];
    for (const r of rows) {
      const plain = r.issuer_id === issuerId ? [secret, previousSecret] : [bulkSecret(r.issuer_id)];
      for (const spelling of plain.flatMap(spellings))
        assert.ok(!r.row.toLowerCase().includes(spelling.toLowerCase()), `plaintext left in ${r.row}`);
    }
    assert.deepEqual(
      (await migrate(url, { webhookSecretKeys: testWebhookSecretKeys })).applied,
      [],
      'a second run has nothing to do',
    );
  });

  it('seals them through `npm run migrate` too, with the WEBHOOK_SECRET_KEYS it runs with', async () => {
    const cliUrl = await databaseBefore('secret_migration_cli', FIRST_SEALED);
    const cliClient = new pg.Client({ connectionString: cliUrl });
    await cliClient.connect();
    try {
      const cliIssuer = `iss_${randomUUID()}`;
      await cliClient.query(`INSERT INTO issuer (id, name, environment) VALUES ($1, 'Old issuer', 'sandbox')`, [
        cliIssuer,
      ]);
      await cliClient.query(
        `INSERT INTO webhook_endpoint (issuer_id, url, enabled_types, secret) VALUES ($1, 'https://hooks.example.com/a', ARRAY['qualified_settlement'], $2)`,
        [cliIssuer, secret],
      );
      // The deploy step, as docs/operating/deploy.md runs it (from source here, as the built one is not).
      const run = spawnSync(process.execPath, ['--import', 'tsx', 'prisma/migrate-cli.ts'], {
        env: { PATH: process.env.PATH, DATABASE_URL: cliUrl, WEBHOOK_SECRET_KEYS: TEST_WEBHOOK_SECRET_KEYS },
        encoding: 'utf8',
      });
      assert.equal(run.status, 0, run.stderr + run.stdout);
      const { rows } = await cliClient.query('SELECT issuer_id, secret_key_id FROM webhook_endpoint');
      assert.deepEqual(rows, [{ issuer_id: cliIssuer, secret_key_id: testWebhookSecretKeys.primaryKeyId }]);
      const db = createDb(cliUrl, 1);
      try {
        const [endpoint] = await db.webhookEndpoint.findMany();
        assert.deepEqual(openSecrets(testWebhookSecretKeys, cliIssuer, endpoint), { secret, previousSecret: null });
      } finally {
        await db.$disconnect();
      }
    } finally {
      await cliClient.end();
    }
  });

  describe('after the migration', () => {
    let db: Db;
    before(() => (db = createDb(url, 2)));
    after(() => db?.$disconnect());

    it('keeps every secret: each row opens to the secret it held', async () => {
      const endpoints = await db.webhookEndpoint.findMany();
      for (const e of endpoints) {
        const expected =
          e.issuerId === issuerId
            ? { secret, previousSecret }
            : { secret: bulkSecret(e.issuerId), previousSecret: null };
        assert.deepEqual(openSecrets(testWebhookSecretKeys, e.issuerId, e), expected);
      }
    });

    it('delivers webhooks that verify with the original secret and, during its overlap, the previous one', async () => {
      const webhookId = await outboxWebhook(db, issuerId);
      const activities = createWebhookActivities({
        db,
        logger: createLogger('silent'),
        clock: { now: () => new Date() },
        webhookDestinations: testWebhookDestinations,
        webhookSecretKeys: testWebhookSecretKeys,
      });
      const result = await activities.attemptWebhookDelivery({
        webhookId,
        attemptNumber: 1,
        nextAttemptInMs: null,
        replay: false,
      });
      assert.equal(result.outcome, 'succeeded', JSON.stringify(result));
      const request = receiver.requests.find((r) => r.headers['webhook-id'] === webhookId)!;
      for (const s of [secret, previousSecret])
        assert.doesNotThrow(() => new Webhook(s).verify(request.body, request.headers as Record<string, string>));
    });
  });
});
