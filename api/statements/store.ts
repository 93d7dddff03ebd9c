// Statements for the operator routes and the admin CLI: a run's row and its workflow, reading
// statements, and posting a merchant's payment. The billing is core/domain/statements.ts's (and the
// run's workflow's).
import { createHash } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { errors } from '../../core/errors';
import { newId } from '../../core/ids';
import { classifyFailure } from '../../core/failures';
import { recordAudit } from '../../core/domain/audit';
import { startStatementRunWorkflow } from '../../core/domain/run-starts';
import { postTransfer, type Tx } from '../../core/domain/ledger';
import { lockIdempotencyKey } from '../../core/domain/ledger/tx';
import { fromDbMinor } from '../../core/ledger';
import { periodBounds, statementStatus } from '../../core/rules/statements';
import type { WorkflowEngine } from '../../core/workflow-engine';
import type { Db } from '../../prisma/client';
import type { Statement, StatementPayment, StatementRun } from '../../prisma/generated/client';
import { decodeCursor, toPage } from '../pagination';
import type { StatementListQuery, StatementPaymentInput } from './schemas';

/** Who asks, under which key, and when (the operator's clock). */
export interface OperatorCall {
  actor: string;
  idempotencyKey: string;
  at: Date;
}

const hashOf = (...parts: unknown[]) => createHash('sha256').update(JSON.stringify(parts)).digest('hex');

const keyReused = () =>
  errors.conflict('idempotency_key_reused', 'This Idempotency-Key was used with another request.');

/**
 * Writes the run's row (audited), then starts its workflow. The same Idempotency-Key answers the
 * run it created (and starts its workflow if a crash left it unstarted); a new run while one is
 * processing is 409 statement_run_in_progress.
 */
export async function createStatementRun(
  db: Db,
  temporal: WorkflowEngine | undefined,
  call: OperatorCall,
  period: string,
  chunkSize?: number,
): Promise<{ run: StatementRun; created: boolean }> {
  // A month that has not begun would take every account's transfers so far, and no statement of an
  // earlier month could follow it: a typo an operator could not undo, since statements never change.
  if (periodBounds(period).start.getTime() > call.at.getTime())
    throw errors.validation('period_not_started', `The period ${period} has not begun.`, [
      { path: '/period', message: 'must not be after the current month' },
    ]);
  if (!temporal)
    throw errors.unavailable('workflow_engine_unavailable', 'The workflow engine is not configured; run it later.');
  const requestHash = hashOf('statement-run', period);
  const { run, created } = await db.$transaction(async (tx) => {
    await lockIdempotencyKey(tx, `statement-run:${call.idempotencyKey}`);
    const previous = await tx.statementRun.findUnique({ where: { idempotencyKey: call.idempotencyKey } });
    if (previous) {
      if (previous.requestHash !== requestHash) throw keyReused();
      return { run: previous, created: false };
    }
    // One run at a time: creations queue here, so the check below sees every other.
    await lockIdempotencyKey(tx, 'statement-run');
    const running = await tx.statementRun.findFirst({ where: { status: 'processing' }, select: { id: true } });
    if (running)
      throw errors.conflict('statement_run_in_progress', `Statement run ${running.id} is still processing.`, {
        runId: running.id,
      });
    const row = await tx.statementRun.create({
      data: {
        id: newId('stmrun'),
        period,
        status: 'processing',
        idempotencyKey: call.idempotencyKey,
        requestHash,
        actor: call.actor,
        createdAt: call.at,
        updatedAt: call.at,
      },
    });
    await recordAudit(
      tx,
      { actor: call.actor, action: 'statement_run.create', targetId: row.id, details: { period } },
      call.at,
    );
    return { run: row, created: true };
  });
  if (run.status === 'processing') await startRun(db, temporal, run, created, chunkSize);
  return { run, created };
}

async function startRun(
  db: Db,
  temporal: WorkflowEngine,
  run: StatementRun,
  created: boolean,
  chunkSize?: number,
): Promise<void> {
  try {
    await startStatementRunWorkflow(temporal, run, { chunkSize });
  } catch (err) {
    // A replayed request whose run is under way, or one the worker's watch started: nothing to start.
    if (err instanceof WorkflowExecutionAlreadyStartedError) return;
    // Not started and nothing billed: the run is withdrawn, so the operator may ask again.
    if (created) await db.statementRun.deleteMany({ where: { id: run.id, status: 'processing', statementCount: 0 } });
    if (classifyFailure(err) === 'workflow_engine_unavailable')
      throw errors.unavailable('workflow_engine_unavailable', 'The workflow engine is unreachable; run it later.');
    throw err;
  }
}

export async function findStatementRun(db: Db, runId: string): Promise<StatementRun> {
  const run = await db.statementRun.findUnique({ where: { id: runId } });
  if (!run) throw errors.notFound('statement_run_not_found', `No statement run ${runId}.`);
  return run;
}

export async function findStatement(db: Db | Tx, statementId: string): Promise<Statement> {
  const statement = await db.statement.findUnique({ where: { id: statementId } });
  if (!statement) throw errors.notFound('statement_not_found', `No statement ${statementId}.`);
  return statement;
}

/** Statements by id (the order they were issued in), filtered by period, merchant and issuer. */
export async function listStatements(
  db: Db,
  query: StatementListQuery & { limit: number },
): Promise<{ data: Statement[]; nextCursor: string | null }> {
  const after = decodeCursor(query.cursor, 1);
  const rows = await db.statement.findMany({
    where: {
      ...(query.period ? { period: query.period } : {}),
      ...(query.merchantId ? { merchantId: query.merchantId } : {}),
      ...(query.issuerId ? { issuerId: query.issuerId } : {}),
      ...(after ? { id: { gt: String(after[0]) } } : {}),
    },
    orderBy: { id: 'asc' },
    take: query.limit + 1,
  });
  return toPage(rows, query.limit, (s) => [s.id]);
}

/**
 * Posts a merchant's payment against a statement, in one transaction: the merchant_payment
 * transfer (merchant_cash -> merchant_receivable, on the issuer's clock), the payment's row, the
 * statement's paid amount and status, and the audit entry. At most what is still due (409
 * payment_exceeds_due). The same Idempotency-Key answers the same payment, even after the HTTP
 * replay window; another request under it is 409 idempotency_key_reused.
 */
export async function payStatement(
  db: Db,
  call: OperatorCall,
  statementId: string,
  input: StatementPaymentInput,
): Promise<{ payment: StatementPayment; statement: Statement; created: boolean }> {
  const requestHash = hashOf('statement-payment', statementId, input.amountMinor, input.reference);
  return db.$transaction(async (tx) => {
    await lockIdempotencyKey(tx, `statement-payment:${call.idempotencyKey}`);
    const previous = await tx.statementPayment.findUnique({ where: { idempotencyKey: call.idempotencyKey } });
    if (previous) {
      if (previous.requestHash !== requestHash) throw keyReused();
      return { payment: previous, statement: await findStatement(tx, statementId), created: false };
    }
    const [locked] = await tx.$queryRaw<
      Array<{ id: string }>
    >`SELECT id FROM statement WHERE id = ${statementId} FOR UPDATE`;
    if (!locked) throw errors.notFound('statement_not_found', `No statement ${statementId}.`);
    const statement = await findStatement(tx, statementId);
    const outstanding = fromDbMinor(statement.totalDueMinor) - fromDbMinor(statement.paidMinor);
    if (input.amountMinor > outstanding)
      throw errors.conflict(
        'payment_exceeds_due',
        `The statement has ${Math.max(0, outstanding)} minor units still due; a payment of ${input.amountMinor} is more.`,
        { outstandingMinor: Math.max(0, outstanding) },
      );
    const id = newId('stmpay');
    const at = await issuerNowOf(tx, statement.issuerId, call.at);
    const { transfer } = await postTransfer(tx, {
      idempotencyKey: `statement-payment:${id}`,
      kind: 'merchant_payment',
      issuerId: statement.issuerId,
      chgId: '',
      merchantId: statement.merchantId,
      amountMinor: input.amountMinor,
      at,
    });
    const payment = await tx.statementPayment.create({
      data: {
        id,
        statementId,
        issuerId: statement.issuerId,
        amountMinor: BigInt(input.amountMinor),
        reference: input.reference,
        idempotencyKey: call.idempotencyKey,
        requestHash,
        transferId: transfer.id,
        actor: call.actor,
        createdAt: call.at,
      },
    });
    const paidMinor = fromDbMinor(statement.paidMinor) + input.amountMinor;
    const updated = await tx.statement.update({
      where: { id: statementId },
      data: {
        paidMinor: BigInt(paidMinor),
        status: statementStatus(fromDbMinor(statement.totalDueMinor), paidMinor),
        updatedAt: call.at,
      },
    });
    await recordAudit(
      tx,
      {
        actor: call.actor,
        action: 'statement.payment',
        targetId: statementId,
        details: { paymentId: id, amountMinor: input.amountMinor, reference: input.reference, transferId: transfer.id },
      },
      call.at,
    );
    return { payment, statement: updated, created: true };
  });
}

/** The issuer's clock (a sandbox issuer's test clock moves it), which dates its ledger's postings. */
async function issuerNowOf(tx: Tx, issuerId: string, at: Date): Promise<Date> {
  const [row] = await tx.$queryRaw<Array<{ offset: number }>>`
    SELECT clock_offset_ms::float8 AS "offset" FROM issuer WHERE id = ${issuerId}`;
  const offset = row?.offset ?? 0;
  return offset === 0 ? at : new Date(at.getTime() + offset);
}
