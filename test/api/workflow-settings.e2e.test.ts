// SETTLEMENT_TIMEOUT and WEBHOOK_RETRY_SCHEDULE from the environment to the input of every run
// the API starts: the real API process (api/server.ts) reads them, and its hand-over, webhook
// replay and reprocess start their runs with them. The sweeper, in the worker, does the same
// with the settings it is given. A bad value stops the process at start, naming the variable.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { startStack, TEST_HANDOVER_MAX_IN_FLIGHT, type Stack } from '../helpers/stack';
import { newIssuer, OPERATOR_TOKEN, startTestApp, type TestIssuer } from '../helpers/app';
import { spawnApi, waitForReady } from '../helpers/api-process';
import { freePort } from '../helpers/ports';
import { authEvent, storedEvent, type CardRef } from '../helpers/events';
import { groupWithCard } from '../helpers/scenario';
import { deadUrl, insertEndpoint, newWebhookRecord, waitFor } from '../helpers/webhooks';
import { startInput } from '../helpers/engine';
import { loadConfig } from '../../core/config';
import { workflowSettings } from '../../core/workflow-engine';
import { createSweepActivities } from '../../activities/sweeper';
import type { LifecycleInput } from '../../workflows/lifecycle-signals';
import { webhookReplayWorkflowId, type WebhookDeliveryInput } from '../../workflows/webhook-delivery-contract';

/** Neither is the default, so a starter that ignored them would be caught. */
const ENV = { SETTLEMENT_TIMEOUT: '2d', WEBHOOK_RETRY_SCHEDULE: '1m,5m' };
const SETTLEMENT_TIMEOUT_MS = 2 * 86_400_000;
const RETRY_SCHEDULE_MS = [60_000, 300_000];

describe('configured workflow settings reach the runs the API starts', function () {
  this.timeout(120_000);
  let stack: Stack;
  let issuer: TestIssuer;
  let card: CardRef;
  let api: ChildProcess;
  let url: string;
  /** Lifecycles these tests started; each waits two days for a settlement that never comes. */
  const started: WorkflowHandle[] = [];

  before(async () => {
    stack = await startStack({ settings: workflowSettings(loadConfig(ENV)) });
    issuer = await newIssuer(stack.app);
    ({ card } = await groupWithCard(issuer));
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    api = spawnApi(port, stack.taskQueue, ENV);
    await waitForReady(url, api);
  });
  after(async () => {
    api?.kill('SIGTERM');
    await Promise.allSettled(started.map((h) => h.terminate('test finished')));
    await stack?.stop();
  });

  const call = (method: string, path: string, token: string, body?: unknown) =>
    fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  /** The purchase's run, once whoever starts it has. */
  async function lifecycleOf(eventId: string): Promise<WorkflowHandle> {
    const { workflowId } = await stack.db.ingestedEvent.findUniqueOrThrow({ where: { id: eventId } });
    const handle = stack.client.workflow.getHandle(workflowId);
    await waitFor(`the run of ${eventId}`, () =>
      handle.describe().then(
        () => true,
        (err) => (err instanceof WorkflowNotFoundError ? undefined : Promise.reject(err)),
      ),
    );
    started.push(handle);
    return handle;
  }

  /** Stored, not handed over: a test app without a hand-over accepts it. */
  async function storedAuth(): Promise<string> {
    const quiet = await startTestApp({ db: stack.db });
    try {
      const event = authEvent(card);
      assert.equal(
        (await quiet.request('POST', '/api/v1/incoming-auth', { token: issuer.token, body: event })).status,
        204,
      );
      return (await storedEvent(stack.db, issuer.id, 'auth', event.id)).id;
    } finally {
      await quiet.close();
    }
  }

  it("starts a purchase's lifecycle from the API's hand-over with SETTLEMENT_TIMEOUT", async () => {
    const event = authEvent(card);
    assert.equal((await call('POST', '/api/v1/incoming-auth', issuer.token, event)).status, 204);
    const row = await storedEvent(stack.db, issuer.id, 'auth', event.id);
    const input = await startInput<LifecycleInput>(await lifecycleOf(row.id));
    assert.equal(input.settlementTimeoutMs, SETTLEMENT_TIMEOUT_MS);
  });

  it('starts the new run of a reprocessed transaction with SETTLEMENT_TIMEOUT', async () => {
    const eventId = await storedAuth();
    await stack.db.ingestedEvent.update({ where: { id: eventId }, data: { rewardStatus: 'unknown' } });
    const res = await call('POST', `/admin/v1/transactions/${eventId}/reprocess`, OPERATOR_TOKEN, {});
    assert.equal(res.status, 202, await res.text());
    assert.equal(
      (await startInput<LifecycleInput>(await lifecycleOf(eventId))).settlementTimeoutMs,
      SETTLEMENT_TIMEOUT_MS,
    );
  });

  it('replays a webhook with WEBHOOK_RETRY_SCHEDULE', async () => {
    const own = await newIssuer(stack.app);
    const endpointId = await insertEndpoint(stack.db, own.id, await deadUrl());
    const webhookId = await newWebhookRecord(stack.db, own.id);
    const res = await call('POST', `/api/v2/webhooks/${webhookId}/replay`, own.token);
    assert.equal(res.status, 202);
    const { firstAttemptNumber } = (await res.json()) as { firstAttemptNumber: number };
    const input = await startInput<WebhookDeliveryInput>(
      stack.client.workflow.getHandle(webhookReplayWorkflowId(webhookId, endpointId, firstAttemptNumber)),
    );
    assert.deepEqual([input.endpointId, input.retryScheduleMs], [endpointId, RETRY_SCHEDULE_MS]);
  });

  it('hands over from the sweeper with the settlement time-out it is given', async () => {
    const eventId = await storedAuth();
    const sweep = createSweepActivities({
      db: stack.db,
      clock: { now: () => new Date(Date.now() + 60_000) },
      temporal: stack.engine,
      handoverMaxInFlight: TEST_HANDOVER_MAX_IN_FLIGHT,
    });
    assert.ok((await sweep.sweepHandovers({ olderThanMs: 30_000, limit: 5000 })).handedOver >= 1);
    assert.equal(
      (await startInput<LifecycleInput>(await lifecycleOf(eventId))).settlementTimeoutMs,
      SETTLEMENT_TIMEOUT_MS,
    );
  });

  it('refuses to start with a bad value, naming each bad variable', async () => {
    const bad = spawnApi(
      await freePort(),
      stack.taskQueue,
      { SETTLEMENT_TIMEOUT: 'soon', WEBHOOK_RETRY_SCHEDULE: '30s,8d' },
      'pipe',
    );
    let stderr = '';
    bad.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => bad.once('exit', resolve));
    assert.equal(code, 1);
    assert.match(stderr, /SETTLEMENT_TIMEOUT must be .*\(got "soon"\)/);
    assert.match(stderr, /WEBHOOK_RETRY_SCHEDULE must be .*\(got "30s,8d"\)/);
  });
});
