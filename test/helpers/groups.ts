// Builders of cardholder group bodies with unique external ids, so tests never collide.
import { randomUUID } from 'node:crypto';

export function uniq(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

export function groupBody(overrides: Record<string, unknown> = {}) {
  return {
    externalId: uniq('household'),
    status: 'active',
    settings: { locale: 'en-US', timezone: 'America/New_York', displayName: 'The Smiths', metadata: { tier: 'gold' } },
    cardholders: [
      {
        externalId: uniq('c'),
        status: 'active',
        cards: [{ externalId: uniq('k'), last4: '4242', network: 'visa', status: 'active' }],
      },
    ],
    ...overrides,
  };
}
