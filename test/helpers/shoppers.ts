// A sandbox issuer's group activated at a merchant, and its purchases dated now on the issuer's
// clock, processed to the end: the shape of most tests of what an offer pays.
import assert from 'node:assert/strict';
import { newIssuer, type TestIssuer } from './app';
import { groupBody } from './groups';
import { cardOf, settledEvent, type CardRef } from './events';
import { FINAL_STATUSES, type Stack } from './stack';

export interface Shopper {
  issuer: TestIssuer;
  chgId: string;
  card: CardRef;
}

/** A group of `issuer` (a new sandbox issuer by default) that activated the merchant. */
export async function shopperAt(stack: Stack, merchantId: string, issuer?: TestIssuer): Promise<Shopper> {
  const owner = issuer ?? (await newIssuer(stack.app, 'sandbox'));
  const group = (await owner.call('POST', '/api/v2/chg', groupBody())).body;
  const activated = await owner.call('PUT', `/api/v2/chg/${group.id}/merchant/${merchantId}/activation`, {});
  assert.equal(activated.status, 201, activated.text);
  return { issuer: owner, chgId: group.id, card: cardOf(group) };
}

/** A settled purchase (or, with `extra`, a refund) dated now on the issuer's clock: its txn_ id and final status. */
export async function buyAt(
  stack: Stack,
  s: Shopper,
  merchantId: string,
  amount: number,
  extra: Record<string, unknown> = {},
) {
  const now = (await s.issuer.call('GET', '/api/v2/sandbox/clock')).body.now;
  const event = settledEvent(s.card, { amount, merchantId, createdAt: now, settledAt: now, ...extra });
  const res = await s.issuer.call('POST', '/api/v1/incoming-txn', event);
  assert.equal(res.status, 204, res.text);
  const row = await stack.db.ingestedEvent.findFirstOrThrow({
    where: { issuerId: s.issuer.id, kind: 'settled', externalId: event.id },
  });
  return { id: row.id, externalId: event.id, status: await stack.waitForStatus(row.id, FINAL_STATUSES) };
}
