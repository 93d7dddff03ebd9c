// TransactionLifecycle with stub activities: the branches whose logic is the workflow's own and
// needs no database (a refund waiting for its purchase, the operator's reprocess signal, the
// settlement time-out). Each step is a local activity in the workflow, so the stubs stand in
// for those; they record what the workflow asked and answer what the scenario needs. Timers
// run on the time-skipping test server: a day passes as soon as the test awaits the result.
// The steps with the database are covered by lifecycle.e2e.test.ts and friends.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { startTimeSkippingServer } from '../helpers/time-skipping';
import { WORKFLOWS_PATH } from '../../worker/worker';
import { NO_HANDOVER_RELEASE } from '../../worker/handover-release';
import { INVARIANT_BROKEN } from '../../core/failure-types';
import type { LifecycleActivities, StepInput, StepOutcome } from '../../activities/lifecycle/types';
import { transactionLifecycle } from '../../workflows/transaction-lifecycle';
import {
  authorizationSignal,
  lifecycleInput,
  refundSignal,
  reprocessSignal,
  reversalSignal,
  settlementSignal,
} from '../../workflows/lifecycle-signals';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const TIMEOUT_MS = 3 * DAY_MS;

type Step = Exclude<keyof LifecycleActivities, 'markUnknown'>;
interface Call {
  step: Step | 'markUnknown';
  eventId: string;
  atMs?: number;
  reason?: string;
}

/**
 * Stub lifecycle activities. `answers[step][eventId]` says what a step answers for an event:
 * a status, a list of them taken one per call (the last repeats), a failure, or a function.
 */
type Answer = StepOutcome['status'] | StepOutcome['status'][] | Error | ((input: StepInput) => Promise<StepOutcome>);

function stubActivities(calls: Call[], answers: Map<string, Answer>): LifecycleActivities {
  const step =
    (name: Step) =>
    async (input: StepInput): Promise<StepOutcome> => {
      calls.push({ step: name, eventId: input.eventId, atMs: input.atMs });
      const answer = answers.get(`${name}:${input.eventId}`);
      if (answer === undefined) throw new Error(`no stub answer for ${name}(${input.eventId})`);
      if (answer instanceof Error) throw answer;
      if (typeof answer === 'function') return answer(input);
      const status = Array.isArray(answer) ? (answer.length > 1 ? answer.shift()! : answer[0]) : answer;
      return { status, merchantId: 'mp_stub' };
    };
  return {
    previewAuthorization: step('previewAuthorization'),
    voidPreview: step('voidPreview'),
    lapsePreview: step('lapsePreview'),
    settleTransaction: step('settleTransaction'),
    clawBackRefund: step('clawBackRefund'),
    async markUnknown(input) {
      calls.push({ step: 'markUnknown', eventId: input.eventId, reason: input.reason });
    },
  };
}

describe('TransactionLifecycle with stub activities (time-skipping, no database)', function () {
  this.timeout(120_000);
  let env: TestWorkflowEnvironment;
  let bundle: WorkflowBundleWithSourceMap;
  let calls: Call[];
  let answers: Map<string, Answer>;
  let taskQueue: string;
  let worker: Worker;
  let running: Promise<void>;

  before(async () => {
    // The workflow upserts our search attributes after each step: the server knows them.
    env = await startTimeSkippingServer();
    bundle = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH });
  });
  after(async () => {
    await env?.teardown();
  });

  // A worker of its own per test, on a queue of its own (a Worker runs once).
  beforeEach(async () => {
    calls = [];
    answers = new Map();
    taskQueue = `stubbed-${randomUUID()}`;
    worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: bundle,
      activities: stubActivities(calls, answers),
      sinks: NO_HANDOVER_RELEASE,
    });
    running = worker.run();
  });
  afterEach(async () => {
    worker.shutdown();
    await running;
  });

  const workflowId = () => `txn/iss_stub/${randomUUID()}`;
  const start = (id: string, signal: typeof authorizationSignal, eventId: string) =>
    env.client.workflow.signalWithStart(transactionLifecycle, {
      workflowId: id,
      taskQueue,
      args: [lifecycleInput('iss_stub', TIMEOUT_MS)],
      signal,
      signalArgs: [{ eventId }],
    });
  const stepsOf = () => calls.map((c) => `${c.step}:${c.eventId}`);
  /** Polls the stub log (the workflow runs on the worker, not in the test). */
  async function called(what: string): Promise<void> {
    for (let i = 0; i < 200; i++) {
      if (stepsOf().includes(what)) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    assert.fail(`${what} was never called; calls: ${stepsOf().join(', ')}`);
  }

  describe('a refund that arrives before its purchase', () => {
    it('waits, then claws back once the settlement has been posted', async () => {
      answers.set('clawBackRefund:r1', ['waiting_for_purchase', 'matched']);
      answers.set('settleTransaction:s1', 'matched');
      const handle = await start(workflowId(), refundSignal, 'r1');
      await called('clawBackRefund:r1');
      await handle.signal(settlementSignal, { eventId: 's1' });
      const summary = await handle.result();
      assert.deepEqual(stepsOf(), ['clawBackRefund:r1', 'settleTransaction:s1', 'clawBackRefund:r1']);
      assert.deepEqual(
        summary.steps.map((s) => [s.signal, s.eventId, s.status]),
        [
          ['refund', 'r1', 'waiting_for_purchase'],
          ['settlement', 's1', 'matched'],
          ['refund', 'r1', 'matched'],
        ],
      );
    });

    it('asks again every hour for three days, then marks the refund unknown', async () => {
      answers.set('clawBackRefund:r2', 'waiting_for_purchase');
      const handle = await start(workflowId(), refundSignal, 'r2');
      await handle.result();
      const asked = calls.filter((c) => c.step === 'clawBackRefund');
      // The first try and one per hourly wait (MAX_REFUND_WAITS = 72).
      assert.equal(asked.length, 73);
      assert.ok(asked[72].atMs! - asked[0].atMs! >= 72 * HOUR_MS, 'the retries are an hour apart');
      assert.deepEqual(calls.at(-1), {
        step: 'markUnknown',
        eventId: 'r2',
        reason: 'the refunded purchase was never settled',
      });
    });
  });

  describe('the reprocess signal', () => {
    it('re-runs a step that ended unknown, in a new run of the same workflow id, once per request id', async () => {
      const id = workflowId();
      answers.set('settleTransaction:s3', new ApplicationFailure('catalogue row unreadable', INVARIANT_BROKEN, true));
      const first = await (await start(id, settlementSignal, 's3')).result();
      assert.deepEqual(
        first.steps.map((s) => s.status),
        ['unknown'],
      );
      assert.deepEqual(calls.at(-1), { step: 'markUnknown', eventId: 's3', reason: 'catalogue row unreadable' });

      // The operator fixed the data and asks twice (a double click). The step is held until the
      // repeat has arrived, so that it lands in the run serving the first request.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      answers.set('settleTransaction:s3', async () => {
        await held;
        return { status: 'matched', merchantId: 'mp_stub' };
      });
      const request = { eventId: 's3', step: 'settlement' as const, requestId: 'op-1' };
      calls.length = 0;
      const handle = await env.client.workflow.signalWithStart(transactionLifecycle, {
        workflowId: id,
        taskQueue,
        args: [lifecycleInput('iss_stub', TIMEOUT_MS)],
        signal: reprocessSignal,
        signalArgs: [request],
      });
      await called('settleTransaction:s3');
      await handle.signal(reprocessSignal, request);
      release();
      const second = await handle.result();
      // One step for the request, however often it came. The stub itself may have been called
      // twice: a local activity is at least once, and the repeat signal, arriving while the
      // step ran, made the server refuse that workflow task's completion and its marker, so the
      // step ran again (harmless: every step is idempotent by its event's keys).
      assert.deepEqual(
        second.steps.map((s) => [s.signal, s.eventId, s.status]),
        [['settlement', 's3', 'matched']],
      );
      assert.ok(
        calls.every((c) => c.step === 'settleTransaction' && c.eventId === 's3'),
        stepsOf().join(', '),
      );
    });
  });

  describe('the settlement time-out', () => {
    it('lapses a preview that no settlement followed, after the configured time-out', async () => {
      answers.set('previewAuthorization:a1', 'previewed');
      answers.set('lapsePreview:a1', 'lapsed');
      const summary = await (await start(workflowId(), authorizationSignal, 'a1')).result();
      assert.deepEqual(stepsOf(), ['previewAuthorization:a1', 'lapsePreview:a1']);
      assert.deepEqual(
        summary.steps.map((s) => s.status),
        ['previewed', 'lapsed'],
      );
      const waitedMs = calls[1].atMs! - calls[0].atMs!;
      assert.ok(waitedMs >= TIMEOUT_MS && waitedMs < TIMEOUT_MS + HOUR_MS, `waited ${waitedMs} ms`);
    });

    it('does not lapse a preview that was reversed or settled in time', async () => {
      answers.set('previewAuthorization:a2', 'previewed');
      answers.set('voidPreview:v2', 'voided');
      const reversed = await start(workflowId(), authorizationSignal, 'a2');
      await called('previewAuthorization:a2');
      await reversed.signal(reversalSignal, { eventId: 'v2' });
      await reversed.result();

      answers.set('previewAuthorization:a3', 'previewed');
      answers.set('settleTransaction:s4', 'matched');
      const settled = await start(workflowId(), authorizationSignal, 'a3');
      await called('previewAuthorization:a3');
      await settled.signal(settlementSignal, { eventId: 's4' });
      await settled.result();

      assert.deepEqual(stepsOf(), [
        'previewAuthorization:a2',
        'voidPreview:v2',
        'previewAuthorization:a3',
        'settleTransaction:s4',
      ]);
    });
  });
});
