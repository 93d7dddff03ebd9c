// The data the benchmark runs on, built through the public and operator APIs as an issuer
// and an operator would: one sandbox issuer with a token, cardholder groups with one card
// each, two merchants with live offers (one with branded balance), every group activated
// for both, and the issuer's webhook endpoint pointing at the bench's local receiver.
import { settledEvent, type CardRef } from '../test/helpers/events';

export interface Fixture {
  issuerId: string;
  token: string;
  groups: Array<{ chgId: string; card: CardRef }>;
  merchantIds: string[];
}

export type Call = (method: string, path: string, body?: unknown) => Promise<any>;

/** A JSON caller of the API with one bearer token; a non-2xx answer throws with its body. */
export function caller(apiUrl: string, token: string): Call {
  return async (method, path, body) => {
    const res = await fetch(apiUrl + path, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path}: HTTP ${res.status} ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : undefined;
  };
}

export async function buildFixture(options: {
  apiUrl: string;
  operatorToken: string;
  groups: number;
  webhookUrl: string;
}): Promise<Fixture> {
  const operator = caller(options.apiUrl, options.operatorToken);
  const issuer = await operator('POST', '/admin/v1/issuers', { name: 'Bench issuer', environment: 'sandbox' });
  const { token } = await operator('POST', `/admin/v1/issuers/${issuer.id}/tokens`, { label: 'bench' });
  const call = caller(options.apiUrl, token);
  const startsAt = new Date(Date.now() - 10 * 86_400_000).toISOString();
  const merchantIds: string[] = [];
  for (const branded of [true, false]) {
    const merchant = await operator('POST', '/admin/v1/merchants', {
      name: `Bench merchant ${branded ? 'branded' : 'cashback'}`,
      category: 'dining',
      brandedBalance: { enabled: branded, spendMinimumMinor: 0, availabilityDelayDays: 0, expiryDays: 365 },
    });
    await operator('POST', `/admin/v1/merchants/${merchant.id}/offers`, {
      title: 'Bench offer',
      cashbackRateBps: 500,
      brandedRateBps: branded ? 200 : 0,
      startsAt,
    });
    merchantIds.push(merchant.id);
  }
  const groups: Fixture['groups'] = [];
  for (let g = 0; g < options.groups; g++) {
    const body = {
      externalId: `bench-household-${g}`,
      status: 'active',
      cardholders: [
        {
          externalId: `bench-ch-${g}`,
          status: 'active',
          cards: [{ externalId: `bench-card-${g}`, last4: '4242', network: 'visa', status: 'active' }],
        },
      ],
    };
    const group = await call('POST', '/api/v2/chg', body);
    for (const merchantId of merchantIds)
      await call('PUT', `/api/v2/chg/${group.id}/merchant/${merchantId}/activation`, {});
    groups.push({ chgId: group.id, card: { cardholderId: `bench-ch-${g}`, cardId: `bench-card-${g}`, last4: '4242' } });
  }
  await call('PUT', '/api/v2/webhook-endpoint', { url: options.webhookUrl, enabledTypes: ['qualified_settlement'] });
  return { issuerId: issuer.id, token, groups, merchantIds };
}

/** A settled purchase at one of the fixture's activated merchants, cycling groups and merchants. */
export function purchase(fixture: Fixture, externalId: string, n: number) {
  const group = fixture.groups[n % fixture.groups.length];
  const merchantId = fixture.merchantIds[Math.floor(n / fixture.groups.length) % fixture.merchantIds.length];
  return settledEvent(group.card, { id: externalId, amount: 1_000 + (n % 50) * 100, merchantId });
}
