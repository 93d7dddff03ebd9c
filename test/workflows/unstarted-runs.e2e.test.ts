// Rows an API process wrote and died before starting their workflow (core/domain/run-starts.ts),
// against the real worker, PostgreSQL and Temporal dev server: a claim, a payout run and a
// statement run written as the API writes them, with no workflow, are started by the watch's
// second turn, never its first, and run to their end; a row whose workflow exists, running or
// closed, is never started again.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startStack, type Stack } from '../helpers/stack';
import { groupWithCard, issuerWith } from '../helpers/scenario';
import { waitFor } from '../helpers/webhooks';
import { newId } from '../../core/ids';
import { startPayoutRunWorkflow, startUnstartedRuns } from '../../core/domain/run-starts';
import { claimWorkflowId } from '../../workflows/claim-resolution-contract';
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
    const first = await startUnstartedRuns(stack.db, stack.engine, new Set());
    assert.deepEqual(first.started, { claims: [], payoutRuns: [], statementRuns: [] });
    for (const id of [claimId, payout.id, statementRunId]) assert.ok(first.seen.has(id), id);

    const second = await startUnstartedRuns(stack.db, stack.engine, first.seen);
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
    const third = await startUnstartedRuns(stack.db, stack.engine, new Set(ours));
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

    const first = await startUnstartedRuns(stack.db, stack.engine, new Set());
    assert.ok(first.seen.has(payout.id));
    const second = await startUnstartedRuns(stack.db, stack.engine, first.seen);
    assert.equal(second.started.payoutRuns.includes(payout.id), false);
    assert.equal((await handle.describe()).status.name, 'TERMINATED');
    assert.equal((await stack.db.payout.findUniqueOrThrow({ where: { id: payout.id } })).status, 'processing');
    // Settled as an operator would after terminating it, so that later tests' turns do not meet it.
    await stack.db.payout.update({ where: { id: payout.id }, data: { status: 'failed', completedAt: new Date() } });
  });
});
