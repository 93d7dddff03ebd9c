// The issuer of the restore drill: purchases sent at a steady rate, one event a request, each
// retried until it is acknowledged (204), as an issuer's client does. It remembers every event it
// sent and when each was acknowledged, so that after the restore it can send again what the
// backup may not hold, and settle the authorizations it left open.
import { authEvent, settledEvent } from '../../test/helpers/events';
import type { Fixture } from '../../bench/fixtures';

export interface SentEvent {
  path: '/api/v1/incoming-auth' | '/api/v1/incoming-txn';
  body: { id: string } & Record<string, unknown>;
  /** Date.now() when the 204 came. */
  acknowledgedAt: number;
}

export interface Issuer {
  sent: SentEvent[];
  /** Authorizations whose settlement the issuer has not sent yet. */
  open: Array<{ auth: SentEvent['body']; settlement: SentEvent['body'] }>;
  /** Sends `count` purchases at `perSecond`, as it goes; resolves once every one is acknowledged. */
  sendPurchases(apiUrl: string, count: number, perSecond: number, label: string): Promise<void>;
  /** Sends events again (ingestion is idempotent by id) and every open settlement; resolves once acknowledged. */
  resend(apiUrl: string, events: SentEvent[]): Promise<void>;
}

const SEND_ATTEMPTS = 60;
const SEND_RETRY_MS = 500;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Purchase n: two in three are settled at once; the third is an authorization, whose settlement
 * follows two seconds later for every other one and is left open (sent after the restore) for the rest.
 */
export function createIssuer(fixture: Fixture): Issuer {
  const sent: SentEvent[] = [];
  const open: Issuer['open'] = [];
  const post = async (apiUrl: string, path: SentEvent['path'], body: SentEvent['body']) => {
    for (let attempt = 0; attempt < SEND_ATTEMPTS; attempt++) {
      const status = await fetch(apiUrl + path, {
        method: 'POST',
        headers: { authorization: `Bearer ${fixture.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then(
        (r) => r.arrayBuffer().then(() => r.status),
        () => 0,
      );
      if (status === 204) {
        sent.push({ path, body, acknowledgedAt: Date.now() });
        return;
      }
      await sleep(SEND_RETRY_MS);
    }
    throw new Error(`${path} ${body.id} was not acknowledged after ${SEND_ATTEMPTS} attempts`);
  };

  const purchase = async (apiUrl: string, n: number, label: string) => {
    const group = fixture.groups[n % fixture.groups.length];
    const merchantId = fixture.merchantIds[Math.floor(n / fixture.groups.length) % fixture.merchantIds.length];
    const amount = 1_000 + (n % 40) * 125;
    if (n % 3 !== 2) {
      await post(
        apiUrl,
        '/api/v1/incoming-txn',
        settledEvent(group.card, { id: `${label}-txn-${n}`, amount, merchantId }),
      );
      return;
    }
    const auth = authEvent(group.card, { id: `${label}-auth-${n}`, amount, merchantId });
    await post(apiUrl, '/api/v1/incoming-auth', auth);
    const settlement = settledEvent(group.card, {
      id: `${label}-txn-${n}`,
      amount,
      merchantId,
      authorizationId: auth.id,
    });
    if (n % 2 === 0) {
      open.push({ auth, settlement });
      return;
    }
    await sleep(2_000);
    await post(apiUrl, '/api/v1/incoming-txn', settlement);
  };

  return {
    sent,
    open,
    async sendPurchases(apiUrl, count, perSecond, label) {
      const started = performance.now();
      const purchases: Array<Promise<void>> = [];
      for (let n = 0; n < count; n++) {
        const wait = started + (n * 1000) / perSecond - performance.now();
        if (wait > 0) await sleep(wait);
        purchases.push(purchase(apiUrl, n, label));
      }
      await Promise.all(purchases);
    },
    async resend(apiUrl, events) {
      await Promise.all(events.map((e) => post(apiUrl, e.path, e.body)));
      const settlements = open.splice(0).map((o) => o.settlement);
      await Promise.all(settlements.map((s) => post(apiUrl, '/api/v1/incoming-txn', s)));
    },
  };
}
