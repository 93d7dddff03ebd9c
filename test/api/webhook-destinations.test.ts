// Webhook destinations over HTTP and through the worker: endpoint URLs
// naming or resolving to internal addresses are refused when saved, in every spelling, for
// sandbox and production issuers; an endpoint stored before the rule fails its attempts with
// destination_refused, at once, and nothing reaches the address. The stack here runs with
// private destinations refused, as production does; the allow setting is the other tests' default.
import assert from 'node:assert/strict';
import { WorkflowNotFoundError } from '@temporalio/client';
import { startStack, type Stack } from '../helpers/stack';
import { assertError, newIssuer, startTestApp, type TestApp, type TestIssuer } from '../helpers/app';
import {
  INTERNAL_HOSTS,
  sealedNewSecret,
  outboxWebhook,
  startReceiver,
  waitFor,
  waitForWebhookStatus,
  type Receiver,
} from '../helpers/webhooks';
import { createWebhookDestinations, systemResolver, type Resolver } from '../../core/webhooks/destination-guard';
import { newId } from '../../core/ids';
import { webhookDeliveryWorkflowId, webhookReplayWorkflowId } from '../../workflows/webhook-delivery-contract';

/** Test names answered here (no external DNS on the test machine); any other name goes to the system. */
const NAMES: Record<string, string[]> = {
  'internal-db.example.com': ['10.1.2.3'],
  'dual.example.com': ['8.8.8.8', '127.0.0.1'],
  'mapped.example.com': ['::ffff:169.254.169.254'],
  'public.example.com': ['8.8.8.8', '2606:4700::1111'],
};
const resolve: Resolver = async (hostname) =>
  NAMES[hostname]
    ? NAMES[hostname].map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
    : systemResolver(hostname);

describe('webhook destinations', function () {
  this.timeout(120_000);
  let stack: Stack;
  let sandbox: TestIssuer;
  let production: TestIssuer;

  before(async () => {
    stack = await startStack({
      settings: { webhookRetryScheduleMs: [200, 200] },
      webhookDestinations: createWebhookDestinations({ allowPrivate: false, resolve }),
    });
    sandbox = await newIssuer(stack.app);
    production = await newIssuer(stack.app, 'production');
  });
  after(() => stack.stop());

  const put = (issuer: TestIssuer, url: string) => issuer.call('PUT', '/api/v2/webhook-endpoint', { url });
  const urlFor = (issuer: TestIssuer, host: string, rest = '/hooks') =>
    issuer === production ? `https://${host}${rest}` : `http://${host}:8080${rest}`;

  describe('when an endpoint is saved', () => {
    it('refuses every spelling of an internal address, for sandbox (http) and production (https) issuers, storing nothing', async () => {
      for (const issuer of [sandbox, production]) {
        for (const host of INTERNAL_HOSTS) {
          const res = await put(issuer, urlFor(issuer, host));
          assertError(res, 400, 'destination_not_allowed');
          assert.match(
            res.body.message,
            /^Webhooks cannot be sent there: .*(loopback|private|carrier-grade NAT|link-local|unique-local|unspecified|multicast|broadcast|reserved|single-label|local networks)/,
            host,
          );
          assert.deepEqual(
            res.body.details.errors.map((e: { path: string }) => e.path),
            ['/url'],
          );
        }
        assertError(await issuer.call('GET', '/api/v2/webhook-endpoint'), 404, 'webhook_endpoint_not_found');
      }
    });

    it('resolves host names and refuses those with any internal address; accepts public names and names that do not resolve yet', async () => {
      for (const issuer of [sandbox, production]) {
        for (const [host, why] of [
          ['internal-db.example.com', /private address/],
          ['dual.example.com', /loopback/],
          ['mapped.example.com', /link-local/],
        ] as const) {
          const res = await put(issuer, urlFor(issuer, host));
          assertError(res, 400, 'destination_not_allowed');
          assert.match(res.body.message, why);
          assert.match(res.body.message, new RegExp(`${host.replace(/\./g, '\\.')} resolves to`));
          assert.doesNotMatch(
            res.body.message,
            /10\.1\.2\.3|127\.0\.0\.1|169\.254\.169\.254/,
            'what our resolver answered is not told',
          );
        }
      }
      const fresh = await newIssuer(stack.app, 'production');
      assert.equal((await put(fresh, 'https://public.example.com/hooks')).status, 201);
      // Nothing can be sent to a name that does not resolve; every attempt checks it again.
      assert.equal((await put(fresh, 'https://not-yet.example.com/hooks')).status, 200);
    });

    it('refuses CR/LF and other control characters and credentials (invalid_webhook_url), and bad ports (destination_not_allowed)', async () => {
      for (const issuer of [sandbox, production]) {
        const base = urlFor(issuer, 'public.example.com');
        for (const url of [
          `${base}\r\nX-Injected: 1`,
          `${base}\n`,
          `${base}\t`,
          ` ${base}`,
          `${base}/a b`,
          base.replace('://', '://user:pw@'),
        ]) {
          const res = await put(issuer, url);
          assertError(res, 400, 'invalid_webhook_url');
          assert.match(res.body.message, /control characters|credentials/, JSON.stringify(url));
        }
        for (const port of [4190, 6000, 25, 0]) {
          const res = await put(
            issuer,
            `${issuer === production ? 'https' : 'http'}://public.example.com:${port}/hooks`,
          );
          assertError(res, 400, 'destination_not_allowed');
          assert.match(res.body.message, new RegExp(`port ${port}`));
        }
      }
    });

    it('with the allow setting on (local development), accepts loopback receivers but still refuses link-local, unspecified and bad ports', async () => {
      const devApp: TestApp = await startTestApp({ db: stack.db }); // the tests' default: private destinations allowed
      const receiver = await startReceiver();
      try {
        const issuer = await newIssuer(devApp);
        assert.equal((await issuer.call('PUT', '/api/v2/webhook-endpoint', { url: receiver.url })).status, 201);
        assert.equal(
          (
            await issuer.call('PUT', '/api/v2/webhook-endpoint', {
              url: receiver.url.replace('127.0.0.1', 'localhost'),
            })
          ).status,
          200,
        );
        for (const url of [
          'http://169.254.169.254/latest/meta-data/',
          'http://[fe80::1]:8080/',
          'http://0.0.0.0:8080/',
          'http://127.0.0.1:6000/',
        ]) {
          assertError(await issuer.call('PUT', '/api/v2/webhook-endpoint', { url }), 400, 'destination_not_allowed');
        }
      } finally {
        await receiver.close();
        await devApp.close();
      }
    });
  });

  describe('when a webhook is attempted', () => {
    let receiver: Receiver;
    beforeEach(async () => (receiver = await startReceiver()));
    afterEach(() => receiver.close());

    /** An endpoint saved before destinations were checked: written straight into the table. */
    async function storedEndpoint(url: string): Promise<{ issuer: TestIssuer; endpointId: string }> {
      const issuer = await newIssuer(stack.app);
      const now = new Date();
      const endpointId = newId('whe');
      await stack.db.webhookEndpoint.create({
        data: {
          id: endpointId,
          issuerId: issuer.id,
          url,
          enabledTypes: ['qualified_auth', 'qualified_settlement'],
          ...sealedNewSecret(issuer.id),
          createdAt: now,
          updatedAt: now,
        },
      });
      return { issuer, endpointId };
    }

    it('fails an endpoint stored earlier at 127.0.0.1 with destination_refused at once, relay and replay alike, and nothing reaches it', async () => {
      const { issuer, endpointId } = await storedEndpoint(receiver.url);
      const webhookId = await outboxWebhook(stack.db, issuer.id);
      const failed = await waitForWebhookStatus(stack.db, webhookId, ['failed', 'delivered']);
      assert.deepEqual(
        [failed.status, failed.attemptCount, failed.nextAttemptAt],
        ['failed', 1, null],
        'failed for good, no retry scheduled',
      );
      await assert.rejects(
        stack.client.workflow.getHandle(webhookDeliveryWorkflowId(webhookId, endpointId)).describe(),
        WorkflowNotFoundError,
        'no retries',
      );

      const replay = await issuer.call('POST', `/api/v2/webhooks/${webhookId}/replay`);
      assert.equal(replay.status, 202, replay.text);
      assert.deepEqual(
        [replay.body.endpointId, replay.body.firstAttemptNumber, replay.body.deliveries],
        [endpointId, 2, [{ endpointId, firstAttemptNumber: 2 }]],
      );
      const result = await waitFor('the replay', async () =>
        stack.client.workflow
          .getHandle(webhookReplayWorkflowId(webhookId, endpointId, replay.body.firstAttemptNumber))
          .result()
          .catch((err) => (err instanceof WorkflowNotFoundError ? undefined : Promise.reject(err))),
      );
      assert.deepEqual(result, { webhookId, status: 'failed', attempts: 1 });

      const detail = await issuer.call('GET', `/api/v2/webhooks/${webhookId}`);
      assert.deepEqual(
        detail.body.attempts.map((a: any) => [a.endpointId, a.attemptNumber, a.outcome, a.statusCode, a.errorClass]),
        [
          [endpointId, 1, 'failed', null, 'destination_refused'],
          [endpointId, 2, 'failed', null, 'destination_refused'],
        ],
      );
      assert.deepEqual(
        detail.body.deliveries.map((d: any) => [d.endpointId, d.status, d.attemptCount, d.nextAttemptAt]),
        [[endpointId, 'failed', 2, null]],
      );
      for (const attempt of detail.body.attempts)
        assert.match(attempt.error, /^destination_refused: 127\.0\.0\.1 is a loopback address; nothing was sent$/);
      assert.deepEqual(receiver.requests, [], 'no request reached the receiver');
    });

    it('refuses at attempt time a stored URL on a bad port, with CR/LF, or a name that now resolves inside', async () => {
      const port = new URL(receiver.url).port;
      const urls = [
        'http://public.example.com:6000/hooks',
        `${receiver.url}\r\nX-Injected: 1`,
        `http://internal-db.example.com:${port}/hooks`,
        `http://localhost:${port}/hooks`,
      ];
      for (const url of urls) {
        const { issuer } = await storedEndpoint(url);
        const webhookId = await outboxWebhook(stack.db, issuer.id);
        const row = await waitForWebhookStatus(stack.db, webhookId, ['failed', 'delivered']);
        assert.deepEqual([row.status, row.attemptCount], ['failed', 1], JSON.stringify(url));
        const attempt = await stack.db.webhookAttempt.findFirstOrThrow({ where: { webhookId } });
        assert.match(
          attempt.error ?? '',
          /^destination_refused: .*(port 6000|control characters|private address|loopback name)/,
          JSON.stringify(url),
        );
      }
      assert.deepEqual(receiver.requests, []);
    });
  });
});
