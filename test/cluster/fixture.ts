// The issuer the cluster test sends events for, set up through the operator and issuer APIs
// as an operator and an issuer would: an issuer and its token, cardholder groups with a card
// each, two merchants with live offers (one earning cashback and branded balance, one
// cashback only), every group activated for both, and a webhook endpoint at a local receiver.
// Each event's reward follows from its amount alone, so the test knows what must be posted.
import { settledEvent, type CardRef } from '../helpers/events';
import { caller } from '../../bench/fixtures';

export interface ClusterFixture {
  issuerId: string;
  token: string;
  signingSecret: string;
  groups: Array<{ chgId: string; card: CardRef }>;
  merchants: Array<{ id: string; cashbackRateBps: number; brandedRateBps: number }>;
}

export interface PlannedEvent {
  event: Record<string, unknown>;
  /** Transfers its settlement posts (earn cashback, and earn branded where the merchant has it). */
  transfers: number;
  earnedMinor: number;
}

export async function buildClusterFixture(options: {
  apiUrl: string;
  operatorToken: string;
  groups: number;
  webhookUrl: string;
}): Promise<ClusterFixture> {
  const operator = caller(options.apiUrl, options.operatorToken);
  const issuer = await operator('POST', '/admin/v1/issuers', { name: 'Cluster test issuer', environment: 'sandbox' });
  const { token } = await operator('POST', `/admin/v1/issuers/${issuer.id}/tokens`, { label: 'cluster test' });
  const call = caller(options.apiUrl, token);
  const startsAt = new Date(Date.now() - 10 * 86_400_000).toISOString();
  const merchants: ClusterFixture['merchants'] = [];
  for (const brandedRateBps of [200, 0]) {
    const merchant = await operator('POST', '/admin/v1/merchants', {
      name: `Cluster merchant ${brandedRateBps ? 'branded' : 'cashback'}`,
      category: 'dining',
      // Balance earned becomes spendable after a day: no purchase of the run spends what an
      // earlier one earned, so each event's postings depend on its own amount only.
      brandedBalance: { enabled: brandedRateBps > 0, spendMinimumMinor: 0, availabilityDelayDays: 1, expiryDays: 365 },
    });
    await operator('POST', `/admin/v1/merchants/${merchant.id}/offers`, {
      title: 'Cluster offer',
      cashbackRateBps: 500,
      brandedRateBps,
      startsAt,
    });
    merchants.push({ id: merchant.id, cashbackRateBps: 500, brandedRateBps });
  }
  const groups: ClusterFixture['groups'] = [];
  for (let g = 0; g < options.groups; g++) {
    const card = { cardholderId: `cluster-ch-${g}`, cardId: `cluster-card-${g}`, last4: '4242' };
    const group = await call('POST', '/api/v2/chg', {
      externalId: `cluster-household-${g}`,
      status: 'active',
      cardholders: [
        {
          externalId: card.cardholderId,
          status: 'active',
          cards: [{ externalId: card.cardId, last4: card.last4, network: 'visa', status: 'active' }],
        },
      ],
    });
    for (const merchant of merchants)
      await call('PUT', `/api/v2/chg/${group.id}/merchant/${merchant.id}/activation`, {});
    groups.push({ chgId: group.id, card });
  }
  const endpoint = await call('PUT', '/api/v2/webhook-endpoint', {
    url: options.webhookUrl,
    enabledTypes: ['qualified_settlement'],
  });
  return { issuerId: issuer.id, token, signingSecret: endpoint.signingSecret, groups, merchants };
}

/** The n-th settled purchase of the run, cycling groups and merchants, and what it must earn. */
export function plannedEvent(fixture: ClusterFixture, externalId: string, n: number): PlannedEvent {
  const group = fixture.groups[n % fixture.groups.length];
  const merchant = fixture.merchants[Math.floor(n / fixture.groups.length) % fixture.merchants.length];
  const amount = 1_000 + (n % 50) * 100;
  const share = (bps: number) => Math.floor((amount * bps) / 10_000);
  return {
    event: settledEvent(group.card, { id: externalId, amount, merchantId: merchant.id }),
    transfers: merchant.brandedRateBps > 0 ? 2 : 1,
    earnedMinor: share(merchant.cashbackRateBps) + share(merchant.brandedRateBps),
  };
}
