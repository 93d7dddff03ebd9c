// Builders for catalogue tests: merchants and offers created through the operator API,
// with unique names so tests never see each other's rows.
import assert from 'node:assert/strict';
import type { TestApp, TestIssuer, TestResponse } from './app';
import { groupBody, uniq } from './groups';

export const DAY_MS = 86_400_000;
export const daysFromNow = (n: number) => new Date(Date.now() + n * DAY_MS).toISOString();

export async function createMerchant(app: TestApp, overrides: Record<string, unknown> = {}): Promise<any> {
  const res = await app.operator('POST', '/admin/v1/merchants', {
    name: uniq('Merchant'),
    category: 'dining',
    ...overrides,
  });
  assert.equal(res.status, 201, res.text);
  return res.body;
}

export async function createOffer(
  app: TestApp,
  merchantId: string,
  overrides: Record<string, unknown> = {},
): Promise<any> {
  // An offer given its reward whole has no flat rates: a body gives one or the other.
  const rates = 'reward' in overrides ? {} : { cashbackRateBps: 500, brandedRateBps: 0 };
  const res = await app.operator('POST', `/admin/v1/merchants/${merchantId}/offers`, {
    title: uniq('Offer'),
    ...rates,
    startsAt: daysFromNow(-10),
    ...overrides,
  });
  assert.equal(res.status, 201, res.text);
  return res.body;
}

export async function createGroup(issuer: TestIssuer): Promise<string> {
  const res = await issuer.call('POST', '/api/v2/chg', groupBody());
  assert.equal(res.status, 201, res.text);
  return res.body.id;
}

/** Follows nextCursor to the end; bounded so a cursor bug cannot loop forever. */
export async function walkPages(
  issuer: TestIssuer | { call: TestIssuer['call'] },
  path: string,
  limit: number,
): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 100; page++) {
    const sep = path.includes('?') ? '&' : '?';
    const res: TestResponse = await issuer.call(
      'GET',
      `${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    assert.equal(res.status, 200, res.text);
    assert.ok(res.body.data.length <= limit);
    items.push(...res.body.data);
    cursor = res.body.nextCursor;
    if (!cursor) return items;
  }
  throw new Error('pagination did not end');
}
