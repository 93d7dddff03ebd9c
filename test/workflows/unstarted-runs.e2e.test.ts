// Rows an API process wrote and died before starting their workflow (core/domain/run-starts.ts),
// against the real worker, PostgreSQL and Temporal dev server: a claim, a payout run and a
// statement run written as the API writes them, with no workflow, are started by the watch's
// second turn, never its first, and run to their end; a row whose workflow exists, running or
// closed, is never started again. A claim in review whose run is gone (deleted, as a restore
// leaves it) is started on the turn after the watch's walk of the review queue saw it, waits
// for the operator without deciding again, and takes the approval; one whose run was terminated
// is left alone until an operator deletes that run.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { FINAL_STATUSES, startStack, type Stack } from '../helpers/stack';
import { groupWithCard, issuerWith, purchaseScenario } from '../helpers/scenario';
import { settledEvent } from '../helpers/events';
import { waitFor } from '../helpers/webhooks';
import { newId } from '../../core/ids';
import {
  startPayoutRunWorkflow,
  startUnstartedRuns,
  UNSTARTED_PAGE,
  type UnstartedRunsTurn,
} from '../../core/domain/run-starts';
import { claimOutcomeQuery, claimWorkflowId } from '../../workflows/claim-resolution-contract';
import { payoutWorkflowId } from '../../workflows/payout-run-contract';

describe('rows left without their workflow (the unstarted-runs watch)', function () {
  this.timeout(120_000);
  let stack: Stack;

  before(async () => {
    stack = await startStack();
  });
  after(() => stack?.stop());

  /** A claim as fileClaim writes it before starting its workflow: about a purchase never received. */
  async function claimRow(): Promise<string> {
    const issuer = await issuerWith(stack.app, { environment: 'production' });
    const { group } = await groupWithCard(issuer);
    const id = newId('clm');
    await stack.db.claim.create({
      data: {
        id,
        issuerId: issuer.id,
        chgId: group.id,
        externalId: `never-sent-${randomUUID()}`,
        reason: 'missing_reward',
        workflowId: claimWorkflowId(issuer.id, id),
      },
    });
    return id;
  }

  /** A payout run as createPayoutRun writes it before starting its workflow: an issuer with nothing to pay. */
  async function payoutRunRow(): Promise<{ id: string; issuerId: string }> {
    const issuer = await issuerWith(stack.app);
    const row = await stack.db.payout.create({
      data: {
        id: newId('po'),
        issuerId: issuer.id,
        kind: 'run',
        status: 'processing',
        idempotencyKey: randomUUID(),
        requestHash: 'x',
        minimumMinor: 1n,
        chgIds: [],
        asOf: new Date(),
      },
    });
    return { id: row.id, issuerId: issuer.id };
  }

  /** A statement run as createStatementRun writes it, over a month long past that nothing was posted in. */
  async function statementRunRow(): Promise<string> {
    const row = await stack.db.statementRun.create({
      data: {
        id: newId('stmrun'),
        period: '2001-01',
        status: 'processing',
        idempotencyKey: randomUUID(),
        requestHash: 'x',
        actor: 'test',
      },
    });
    return row.id;
  }

  it('starts a claim, a payout run and a statement run on the turn after it saw them, and each runs to its end', async () => {
    const claimId = await claimRow();
    const payout = await payoutRunRow();
    const statementRunId = await statementRunRow();

    // The first turn only notes them: an API may be starting them this very moment.
    const first = await startUnstartedRuns(stack.db, stack.engine);
    assert.deepEqual(first.started, { claims: [], claimsInReview: [], payoutRuns: [], statementRuns: [] });
    for (const id of [claimId, payout.id, statementRunId]) assert.ok(first.seen.has(id), id);

    const second = await startUnstartedRuns(stack.db, stack.engine, first);
    assert.ok(second.started.claims.includes(claimId));
    assert.ok(second.started.payoutRuns.includes(payout.id));
    assert.ok(second.started.statementRuns.includes(statementRunId));

    const claim = await waitFor('the claim decided', async () => {
      const row = await stack.db.claim.findUniqueOrThrow({ where: { id: claimId } });
      return row.status === 'open' ? undefined : row;
    });
    assert.deepEqual([claim.status, claim.reasonCode], ['rejected', 'transaction_not_received']);
    const paid = await waitFor('the payout run completed', async () => {
      const row = await stack.db.payout.findUniqueOrThrow({ where: { id: payout.id } });
      return row.status === 'processing' ? undefined : row;
    });
    assert.deepEqual([paid.status, paid.groupCount], ['completed', 0]);
    const billed = await waitFor('the statement run completed', async () => {
      const row = await stack.db.statementRun.findUniqueOrThrow({ where: { id: statementRunId } });
      return row.status === 'processing' ? undefined : row;
    });
    assert.deepEqual([billed.status, billed.statementCount], ['completed', 0]);

    // Done, they are no longer the watch's: a later turn neither sees nor starts them.
    const ours = [claimId, payout.id, statementRunId];
    const third = await startUnstartedRuns(stack.db, stack.engine, { seen: new Set(ours), reviewsAfter: null });
    for (const id of ours) {
      assert.equal(third.seen.has(id), false, id);
      for (const started of Object.values(third.started)) assert.equal(started.includes(id), false, id);
    }
  });

  it('leaves alone a row whose workflow closed without finishing it, so an operator who terminated a run is obeyed', async () => {
    const payout = await payoutRunRow();
    // Its run started where no worker polls, then terminated: the row stays processing.
    const row = await stack.db.payout.findUniqueOrThrow({ where: { id: payout.id } });
    await startPayoutRunWorkflow({ ...stack.engine, taskQueue: `nobody-polls-${randomUUID()}` }, row);
    const handle = stack.client.workflow.getHandle(payoutWorkflowId(payout.issuerId, payout.id));
    await handle.terminate('stopped by an operator');

    const first = await startUnstartedRuns(stack.db, stack.engine);
    assert.ok(first.seen.has(payout.id));
    const second = await startUnstartedRuns(stack.db, stack.engine, first);
    assert.equal(second.started.payoutRuns.includes(payout.id), false);
    assert.equal((await handle.describe()).status.name, 'TERMINATED');
    assert.equal((await stack.db.payout.findUniqueOrThrow({ where: { id: payout.id } })).status, 'processing');
    // Settled as an operator would after terminating it, so that later tests' turns do not meet it.
    await stack.db.payout.update({ where: { id: payout.id }, data: { status: 'failed', completedAt: new Date() } });
  });

  describe('a claim in review left without its run', function () {
    // The server deletes a closed run in a task of its own, which may take tens of seconds.
    this.timeout(240_000);

    /**
     * A claim its run sent to review: a production issuer's purchase whose descriptor the
     * merchant's match rules miss, claimed at that merchant (merchant_not_recognised).
     */
    async function claimInReview() {
      const brand = `R${randomUUID().replace(/-/g, '').slice(0, 12).toUpperCase()}`;
      const { issuer, group, card, merchant } = await purchaseScenario(stack.app, {
        environment: 'production',
        matchRules: { descriptorPatterns: [`${brand} COFFEE`] },
        offer: { cashbackRateBps: 500 },
      });
      const event = settledEvent(card, { merchantDescriptor: `${brand}X ROASTERY`, amount: 2500 });
      assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', event)).status, 204);
      const stored = await stack.db.ingestedEvent.findFirstOrThrow({
        where: { issuerId: issuer.id, kind: 'settled', externalId: event.id },
      });
      assert.equal(await stack.waitForStatus(stored.id, FINAL_STATUSES), 'not_matched');
      const filed = await issuer.call('POST', `/api/v2/chg/${group.id}/claims`, {
        reason: 'missing_reward',
        transactionId: stored.id,
        merchantId: merchant.id,
      });
      assert.equal(filed.status, 202, filed.text);
      const claim = await waitFor('the claim in review', async () => {
        const row = await stack.db.claim.findUniqueOrThrow({ where: { id: filed.body.id } });
        return row.status === 'needs_review' ? row : undefined;
      });
      return { claim, handle: stack.client.workflow.getHandle(claim.workflowId) };
    }

    /** Deletes the claim's run, as a Temporal restored from before it (or a new one) lacks it. */
    async function deleteRun(workflowId: string) {
      await stack.client.workflowService.deleteWorkflowExecution({
        namespace: stack.client.options.namespace,
        workflowExecution: { workflowId },
      });
      await waitFor(
        `run ${workflowId} deleted`,
        async () => {
          try {
            await stack.client.workflow.getHandle(workflowId).describe();
            return undefined;
          } catch (err) {
            if ((err as Error).name === 'WorkflowNotFoundError') return true;
            throw err;
          }
        },
        180_000,
      );
    }

    /**
     * Turns of the watch from a fresh start until the claim was seen on one turn; with `started`,
     * until it was also started, which must be on the turn right after. The review queue is
     * shared with every claim the suite left in review: the walk may take a few pages to reach
     * it. Returns the last turn.
     */
    async function turnsUntil(claimId: string, started: boolean): Promise<UnstartedRunsTurn> {
      const pages = Math.ceil((await stack.db.claim.count({ where: { status: 'needs_review' } })) / UNSTARTED_PAGE);
      let turn = await startUnstartedRuns(stack.db, stack.engine);
      assert.equal(turn.started.claimsInReview.includes(claimId), false, 'never on the first turn');
      for (let i = 0; i <= pages + 1; i++) {
        const seen = turn.seen.has(claimId);
        turn = await startUnstartedRuns(stack.db, stack.engine, turn);
        const startedNow = turn.started.claimsInReview.includes(claimId);
        assert.equal(startedNow && !seen, false, 'started only on the turn after the one that saw it');
        if (seen) {
          assert.equal(startedNow, started);
          return turn;
        }
      }
      return assert.fail(`the watch never reached claim ${claimId} in ${pages + 2} turns`);
    }

    /** The operator's approval reaches the restarted run, which answers with the outcome. */
    async function approve(claimId: string) {
      const res = await stack.app.operator('POST', `/admin/v1/claims/${claimId}/approve`, {});
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.status, 'approved');
      assert.equal(await stack.db.adjustment.count({ where: { claimId } }), 1);
    }

    it('starts the run of a claim in review whose run no longer exists, which waits for the operator and takes the approval', async () => {
      const { claim, handle } = await claimInReview();
      await deleteRun(claim.workflowId);
      // Until the watch starts its run, a decision does nothing and says to try again.
      const early = await stack.app.operator('POST', `/admin/v1/claims/${claim.id}/approve`, {});
      assert.equal(early.status, 503, early.text);
      assert.deepEqual(
        [early.body.reasonCode, early.body.details.status],
        ['workflow_engine_unavailable', 'needs_review'],
      );
      assert.equal(await stack.db.adjustment.count({ where: { claimId: claim.id } }), 0);

      await turnsUntil(claim.id, true);
      const outcome = await waitFor('the new run in review', async () => {
        const o = await handle.query(claimOutcomeQuery);
        return o ?? undefined;
      });
      assert.equal(outcome.status, 'needs_review');
      // It did not decide again: the claim is as its first run left it.
      const stored = await stack.db.claim.findUniqueOrThrow({ where: { id: claim.id } });
      assert.deepEqual(
        [stored.status, stored.reasonCode, stored.updatedAt, stored.evidence],
        [claim.status, claim.reasonCode, claim.updatedAt, claim.evidence],
      );
      assert.equal((await handle.describe()).status.name, 'RUNNING');

      await approve(claim.id);
      await handle.result();
    });

    it('leaves alone a claim in review whose run was terminated, and starts it once an operator deleted that run', async () => {
      const { claim, handle } = await claimInReview();
      await handle.terminate('stopped by an operator');

      await turnsUntil(claim.id, false);
      assert.equal((await handle.describe()).status.name, 'TERMINATED');

      await deleteRun(claim.workflowId);
      await turnsUntil(claim.id, true);
      await approve(claim.id);
    });
  });
});
