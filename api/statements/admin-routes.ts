// Merchant statements (API.md, "Funded offers", Statements): the operator bills every merchant for
// a period with one run, reads the statements (JSON, or csv with one line per transfer), and posts
// the merchants' payments. Merchant billing is the operator's: issuers see none of it.
import { statementPaymentReason } from '../../core/rules/four-eyes';
import { PENDING_APPROVAL } from '../approvals/schemas';
import type { Context } from 'koa';
import { requiredIdempotencyKey } from '../middleware/idempotency';
import { fromBody, linksTo } from '../links';
import { defineRoute, type RouteSpec } from '../route';
import { pageSchema } from '../pagination';
import type { AppDeps } from '../deps';
import {
  StatementCsv,
  statementListQuerySchema,
  statementPaymentBodySchema,
  statementPaymentSchema,
  statementQuerySchema,
  statementRunBodySchema,
  statementRunSchema,
  statementSchema,
} from './schemas';
import {
  createStatementRun,
  findStatement,
  findStatementRun,
  listStatements,
  payStatement,
  type OperatorCall,
} from './store';
import { presentStatement, presentStatementPayment, presentStatementRun } from './present';
import { STATEMENT_CSV_CONTENT_TYPE, statementCsvStream } from './csv';

const tag = 'Operator statements';

const WINDOW =
  "A statement holds every transfer that moved the merchant's receivable (for that issuer) posted before the period's end " +
  'and not on an earlier statement, up to the moment it was issued: a transfer posted later for the period, or dated in it ' +
  'but committed after its statement, goes on the next one, so an issued statement never changes and every transfer is ' +
  'on exactly one. totalDueMinor is that movement to the cent, payments excluded.';

const callOf = (ctx: Context, deps: AppDeps, what: string): OperatorCall => ({
  actor: ctx.state.actor as string,
  idempotencyKey: requiredIdempotencyKey(ctx, what),
  at: deps.clock.now(),
});

export function statementAdminRoutes(deps: AppDeps): RouteSpec[] {
  return [createRunRoute(deps), getRunRoute(deps), listRoute(deps), getRoute(deps), payRoute(deps)];
}

function createRunRoute(deps: AppDeps): RouteSpec {
  return defineRoute({
    method: 'post',
    path: '/admin/v1/statements',
    operationId: 'createStatementRun',
    summary: 'Bill every merchant for a period: one statement per (issuer, merchant) with transfers to bill',
    description:
      'Starts a statement run: one Temporal workflow (statements/<period>/<run id>, searchable by RewardsStatus) that bills ' +
      'every merchant receivable in chunks, each statement written once. A merchant already billed for the period (or a ' +
      'later one) gets no new statement: what reached it since goes on its next. A month may be billed once it has ' +
      'begun (400 period_not_started before): what is posted for it afterwards goes on the next statement. One run at a time (409 ' +
      'statement_run_in_progress). The same Idempotency-Key answers the same run. Follow it with GET ' +
      '/admin/v1/statement-runs/{runId}, then list the statements. ' +
      WINDOW +
      ' Audited.',
    tag,
    auth: 'operator',
    body: statementRunBodySchema,
    idempotencyKeyRequired: true,
    responses: {
      202: {
        description: 'Accepted: the run is processing.',
        schema: statementRunSchema,
        links: linksTo(['getStatementRun'], { runId: fromBody('/id') }),
      },
    },
    errorStatuses: [409, 503],
    reasonCodes: {
      400: {
        idempotency_key_required: 'the request has no Idempotency-Key header',
        period_not_started: 'the period is after the current month (UTC)',
      },
      409: { statement_run_in_progress: 'another run is processing (details.runId)' },
      503: { workflow_engine_unavailable: 'the run could not be started: nothing was billed, ask again later' },
    },
    async handle(ctx, { body }) {
      const call = callOf(ctx, deps, 'A statement run');
      const { run } = await createStatementRun(
        deps.db,
        deps.temporal,
        call,
        body.period,
        deps.temporal?.settings.statementChunkAccounts,
      );
      ctx.status = 202;
      ctx.body = presentStatementRun(run);
    },
  });
}

function getRunRoute(deps: AppDeps): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/admin/v1/statement-runs/{runId}',
    operationId: 'getStatementRun',
    summary: 'One statement run: its status, how many statements it issued and their total',
    tag,
    auth: 'operator',
    params: { runId: 'stmrun' },
    responses: { 200: { description: 'The run.', schema: statementRunSchema } },
    errorStatuses: [404],
    reasonCodes: { 404: { statement_run_not_found: 'no such run' } },
    async handle(ctx, { params }) {
      ctx.body = presentStatementRun(await findStatementRun(deps.db, params.runId));
    },
  });
}

function listRoute(deps: AppDeps): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/admin/v1/statements',
    operationId: 'listStatements',
    summary: 'Statements in the order they were issued, by period, merchant and issuer',
    tag,
    auth: 'operator',
    query: statementListQuerySchema,
    responses: {
      200: {
        description: 'A page of statements.',
        schema: pageSchema(statementSchema),
        links: linksTo(['getStatement', 'payStatement'], { statementId: fromBody('/data/0/id') }),
      },
    },
    async handle(ctx, { query }) {
      const page = await listStatements(deps.db, query);
      ctx.body = { data: page.data.map(presentStatement), nextCursor: page.nextCursor };
    },
  });
}

function getRoute(deps: AppDeps): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/admin/v1/statements/{statementId}',
    operationId: 'getStatement',
    summary: 'One statement; format=csv streams one line per transfer on it',
    description: WINDOW,
    tag,
    auth: 'operator',
    params: { statementId: 'stm' },
    query: statementQuerySchema,
    responses: {
      200: {
        description: 'The statement (JSON), or its transfers (csv, streamed).',
        content: {
          'application/json': { schema: statementSchema },
          'text/csv': { schema: StatementCsv },
        },
      },
    },
    errorStatuses: [404],
    reasonCodes: { 404: { statement_not_found: 'no such statement' } },
    async handle(ctx, { params, query }) {
      const statement = await findStatement(deps.db, params.statementId);
      if (query.format !== 'csv') {
        ctx.body = presentStatement(statement);
        return;
      }
      ctx.set('Content-Type', STATEMENT_CSV_CONTENT_TYPE);
      ctx.set('Content-Disposition', `attachment; filename="statement_${statement.id}.csv"`);
      ctx.set('Cache-Control', 'no-store');
      ctx.body = statementCsvStream(deps.db, statement);
    },
  });
}

function payRoute(deps: AppDeps): RouteSpec {
  return defineRoute({
    method: 'post',
    path: '/admin/v1/statements/{statementId}/payments',
    operationId: 'payStatement',
    summary: "Post a merchant's payment against a statement",
    description:
      'One ledger transfer, merchant_cash (debit) to the merchant’s receivable (credit), on the issuer’s clock, with the ' +
      'payment recorded on the statement: paid once payments cover totalDueMinor. At most what is still due (409 ' +
      'payment_exceeds_due, details.outstandingMinor); nothing is posted then. The same Idempotency-Key answers the same ' +
      'payment, even after the 24 h replay window; another request under it is 409 idempotency_key_reused. Audited.',
    tag,
    auth: 'operator',
    params: { statementId: 'stm' },
    body: statementPaymentBodySchema,
    idempotencyKeyRequired: true,
    responses: {
      201: {
        description: 'Posted.',
        schema: statementPaymentSchema,
        links: linksTo(['getStatement'], { statementId: fromBody('/statementId') }),
      },
      202: PENDING_APPROVAL,
    },
    errorStatuses: [404, 409],
    fourEyes: {
      when: 'every payment',
      async check(_ctx, { params }) {
        // No such statement: the handler answers 404, nothing to hold.
        const found = await deps.db.statement.findUnique({ where: { id: params.statementId }, select: { id: true } });
        return found ? statementPaymentReason() : undefined;
      },
    },
    reasonCodes: {
      400: { idempotency_key_required: 'the request has no Idempotency-Key header' },
      404: { statement_not_found: 'no such statement' },
      409: {
        payment_exceeds_due: 'more than is still due (details.outstandingMinor)',
        idempotency_key_reused: 'the Idempotency-Key was used with another payment',
      },
    },
    async handle(ctx, { params, body }) {
      const call = callOf(ctx, deps, 'A statement payment');
      const { payment, statement } = await payStatement(deps.db, call, params.statementId, body);
      ctx.status = 201;
      ctx.body = presentStatementPayment(payment, statement);
    },
  });
}
