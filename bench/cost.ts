// Phase: what one purchase costs Temporal, from real histories. A few settled purchases and
// a few authorized-then-settled ones go through the API like any other; once their webhooks
// arrived, the histories of every workflow that served them (the lifecycle, and a
// WebhookDelivery if a first attempt failed) are fetched and counted by Temporal Cloud's
// rules for billable actions (bench/billable-actions.ts).
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import pg from 'pg';
import { costOfHistories, type HistoryCost } from './billable-actions';
import { purchase, type Fixture } from './fixtures';
import type { Receiver } from './receiver';
import { webhookDeliveryWorkflowId } from '../workflows/webhook-delivery-contract';

export interface PurchaseCost {
  purchases: number;
  /** Per purchase, averaged. */
  actions: number;
  events: number;
  byRule: Record<string, number>;
}

export interface CostResult {
  settled: PurchaseCost;
  authorizedThenSettled: PurchaseCost;
}

interface Options {
  apiUrl: string;
  fixture: Fixture;
  receiver: Receiver;
  temporalAddress: string;
  databaseUrl: string;
  runId: string;
  count: number;
  timeoutMs: number;
}

export async function measureCost(options: Options): Promise<CostResult> {
  const connection = await Connection.connect({ address: options.temporalAddress });
  const client = new Client({ connection });
  const db = new pg.Client({ connectionString: options.databaseUrl });
  await db.connect();
  try {
    const { settledIds, pairs } = await sendPurchases(options, db);
    return {
      settled: await costOf(
        client,
        db,
        options.fixture.issuerId,
        settledIds,
        settledIds.map((id) => [id]),
      ),
      authorizedThenSettled: await costOf(
        client,
        db,
        options.fixture.issuerId,
        pairs.map((p) => p.auth),
        pairs.map((p) => [p.auth, p.settled]),
      ),
    };
  } finally {
    await db.end();
    await connection.close();
  }
}

/**
 * Sends the settled purchases, then the authorized ones, and returns once every webhook of
 * them arrived; returns their external ids.
 */
async function sendPurchases(options: Options, db: pg.Client) {
  const post = async (path: string, body: unknown) => {
    const res = await fetch(options.apiUrl + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${options.fixture.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status !== 204) throw new Error(`${path}: HTTP ${res.status} ${await res.text()}`);
  };
  const arrived = new Set<string>();
  options.receiver.onWebhook = (a) => void arrived.add(a.externalId);
  const waitUntil = (what: string, done: () => boolean | Promise<boolean>) => waitFor(what, done, options.timeoutMs);

  const settledIds = Array.from({ length: options.count }, (_, n) => `cost-${options.runId}-s${n}`);
  for (const [n, id] of settledIds.entries()) await post('/api/v1/incoming-txn', purchase(options.fixture, id, n));
  await waitUntil('the settled purchases’ webhooks', () => settledIds.every((id) => arrived.has(id)));

  const pairs = Array.from({ length: options.count }, (_, n) => ({
    auth: `cost-${options.runId}-a${n}`,
    settled: `cost-${options.runId}-as${n}`,
    n,
  }));
  for (const { auth, n } of pairs) {
    const { settledAt: _settledOnly, ...event } = purchase(options.fixture, auth, n);
    await post('/api/v1/incoming-auth', { ...event, state: 'approved' });
  }
  // The settlement arrives after the preview, as it does in life: the lifecycle then waits
  // on its settlement timer, which is part of what the purchase costs.
  await waitUntil('the previews', async () => {
    const { rows } = await db.query(
      `SELECT count(*) AS n FROM ingested_event WHERE external_id = ANY($1) AND reward_status <> 'pending'`,
      [pairs.map((p) => p.auth)],
    );
    return Number(rows[0].n) === pairs.length;
  });
  for (const { auth, settled, n } of pairs)
    await post('/api/v1/incoming-txn', { ...purchase(options.fixture, settled, n), authorizationId: auth });
  await waitUntil('the authorized purchases’ webhooks', () => pairs.every((p) => arrived.has(p.settled)));
  options.receiver.onWebhook = () => undefined;
  return { settledIds, pairs };
}

async function waitFor(what: string, done: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`cost probe: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The average cost of purchases: per purchase, the history of its lifecycle (by the external
 * id in its workflow id) and of the WebhookDelivery workflow of each webhook its events wrote.
 */
async function costOf(
  client: Client,
  db: pg.Client,
  issuerId: string,
  workflowExternalIds: string[],
  eventExternalIds: string[][],
): Promise<PurchaseCost> {
  const costs: HistoryCost[] = [];
  for (const [i, key] of workflowExternalIds.entries()) {
    const lifecycle = client.workflow.getHandle(`txn/${issuerId}/${key}`);
    await lifecycle.result();
    const histories = [JSON.parse(historyToJSON(await lifecycle.fetchHistory()))];
    const { rows } = await db.query<{ id: string; endpoint_id: string }>(
      `SELECT w.id, d.endpoint_id FROM webhook w JOIN webhook_delivery d ON d.webhook_id = w.id
         JOIN ingested_event e ON e.id = w.source_event_id WHERE e.issuer_id = $1 AND e.external_id = ANY($2)`,
      [issuerId, eventExternalIds[i]],
    );
    for (const { id, endpoint_id: endpointId } of rows) {
      try {
        const delivery = client.workflow.getHandle(webhookDeliveryWorkflowId(id, endpointId));
        await delivery.result();
        histories.push(JSON.parse(historyToJSON(await delivery.fetchHistory())));
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err; // delivered by the relay: no workflow
      }
    }
    costs.push(costOfHistories(histories));
  }
  return average(costs);
}

function average(costs: HistoryCost[]): PurchaseCost {
  const byRule: Record<string, number> = {};
  for (const cost of costs)
    for (const [rule, n] of Object.entries(cost.byRule)) byRule[rule] = (byRule[rule] ?? 0) + n / costs.length;
  return {
    purchases: costs.length,
    actions: costs.reduce((sum, c) => sum + c.actions, 0) / costs.length,
    events: costs.reduce((sum, c) => sum + c.events, 0) / costs.length,
    byRule,
  };
}
