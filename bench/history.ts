// Phase: a long history. Two new groups of the bench issuer: one with a handful of purchases
// (about 10 reward events) and one with thousands (about 10,000 reward events: cashback and
// branded balance earned, and balance spent, at the branded merchant), both made by the real
// pipeline (API → lifecycle → ledger). The summary is then read for each: the quality bar is
// that its latency does not grow with the length of a group's history.
import pg from 'pg';
import { closedLoop } from './load';
import { settledEvent } from '../test/helpers/events';
import type { Fixture } from './fixtures';

export interface HistoryGroup {
  chgId: string;
  purchases: number;
  rewardEvents: number;
}

export async function buildHistories(options: {
  apiUrl: string;
  fixture: Fixture;
  databaseUrl: string;
  runId: string;
  longPurchases: number;
  timeoutMs: number;
}): Promise<{ short: HistoryGroup; long: HistoryGroup }> {
  const short = await group(options, 'short', 4);
  const long = await group(options, 'long', options.longPurchases);
  return { short, long };
}

async function group(
  options: Parameters<typeof buildHistories>[0],
  name: string,
  purchases: number,
): Promise<HistoryGroup> {
  const headers = { authorization: `Bearer ${options.fixture.token}`, 'content-type': 'application/json' };
  const externalId = `bench-history-${name}-${options.runId}`;
  const card = { cardholderId: `${externalId}-ch`, cardId: `${externalId}-card`, last4: '4242' };
  const created = await fetch(`${options.apiUrl}/api/v2/chg`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      externalId,
      cardholders: [
        { externalId: card.cardholderId, cards: [{ externalId: card.cardId, last4: '4242', network: 'visa' }] },
      ],
    }),
  });
  if (created.status !== 201) throw new Error(`creating the ${name} history group: HTTP ${created.status}`);
  const chgId = ((await created.json()) as { id: string }).id;
  const branded = options.fixture.merchantIds[0];
  const activated = await fetch(`${options.apiUrl}/api/v2/chg/${chgId}/merchant/${branded}/activation`, {
    method: 'PUT',
    headers,
    body: '{}',
  });
  if (activated.status !== 201) throw new Error(`activating the ${name} history group: HTTP ${activated.status}`);

  const prefix = `hist-${name}-${options.runId}-`;
  const batches = Math.ceil(purchases / 100);
  let next = 0;
  const r = await closedLoop({
    baseUrl: options.apiUrl,
    connections: 4,
    durationMs: options.timeoutMs,
    expectStatus: 204,
    next: () => {
      const b = next++;
      const size = Math.min(100, purchases - b * 100);
      const events = Array.from({ length: size }, (_, i) =>
        settledEvent(card, {
          id: `${prefix}${b * 100 + i}`,
          amount: 2_000 + ((b * 100 + i) % 7) * 500,
          merchantId: branded,
        }),
      );
      return { method: 'POST', path: '/api/v1/incoming-txn', headers, body: JSON.stringify(events) };
    },
    stopWhen: () => next >= batches,
  });
  if (r.errors > 0) throw new Error(`ingesting the ${name} history: ${r.firstError}`);
  return {
    chgId,
    purchases,
    rewardEvents: await waitProcessed(options.databaseUrl, chgId, purchases, options.timeoutMs),
  };
}

/** Waits (bounded) until every purchase of the group is processed; returns its reward events. */
async function waitProcessed(
  databaseUrl: string,
  chgId: string,
  purchases: number,
  timeoutMs: number,
): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows } = await client.query<{ done: string; events: string }>(
        `SELECT (SELECT count(*) FROM ingested_event WHERE chg_id = $1 AND reward_status <> 'pending') AS done,
                (SELECT count(*) FROM reward_event WHERE chg_id = $1) AS events`,
        [chgId],
      );
      if (Number(rows[0].done) >= purchases) return Number(rows[0].events);
      if (Date.now() > deadline)
        throw new Error(`history of ${chgId}: ${rows[0].done} of ${purchases} processed in time`);
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    await client.end();
  }
}
