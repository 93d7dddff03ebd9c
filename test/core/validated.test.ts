import assert from 'node:assert/strict';
import { compileBody, compileQuery } from '../../api/validation';
import { authEventSchema, settledEventSchema, type AuthEvent, type SettledEvent } from '../../api/ingestion/schemas';
import { groupInputSchema, type GroupInput } from '../../api/chg/schemas';
import { issuerChangesSchema, type IssuerChanges } from '../../api/issuers/schemas';
import { activityQuerySchema, type ActivityQuery } from '../../api/balances/schemas';

// Types derived from the schemas (core/validated.ts) must say what ajv enforces. Each case
// below is judged twice: by the validator when the test runs, and by the type when
// `npm run typecheck` (CI) compiles this file — a `@ts-expect-error` on a value the type
// accepts fails the typecheck, so a schema and its type that drift apart break the build.

const purchase = {
  id: 't-1',
  amount: 2500,
  currency: 'usd',
  merchantDescriptor: 'SQ *BLUE BOTTLE',
  mcc: '5814',
  createdAt: '2026-11-01T12:00:00Z',
  cardLast4: '4242',
  network: 'visa',
  cardholderId: 'c-1001',
  cardId: 'k-9001',
  authMethod: 'contactless',
} as const;

describe('types derived from schemas', () => {
  const settled = compileBody<unknown>(settledEventSchema);
  const auth = compileBody<unknown>(authEventSchema);

  it('a settled purchase and a refund with its purchase are SettledEvents, and valid', () => {
    const ok: SettledEvent[] = [
      { ...purchase, state: 'settled', authorizationId: 'a-1' },
      { ...purchase, id: 'r-1', state: 'refunded', relatedTransactionId: 't-1' },
    ];
    for (const event of ok) assert.equal(settled(event), true, JSON.stringify(settled.errors));
  });

  it('a refund without the purchase it refunds is neither (if/then/else is part of the type)', () => {
    // @ts-expect-error relatedTransactionId is required when state is refunded
    const refund: SettledEvent = { ...purchase, state: 'refunded' };
    assert.equal(settled(refund), false);
  });

  it('a settled purchase naming a related transaction is neither', () => {
    // @ts-expect-error relatedTransactionId is refused on a purchase
    const event: SettledEvent = { ...purchase, state: 'settled', relatedTransactionId: 't-0' };
    assert.equal(settled(event), false);
  });

  it('closed lists are unions: an unknown state or network is neither', () => {
    // @ts-expect-error settled is not an authorization state
    const wrongState: AuthEvent = { ...purchase, state: 'settled' };
    assert.equal(auth(wrongState), false);
    // @ts-expect-error diners is not a network we know
    const wrongNetwork: AuthEvent = { ...purchase, network: 'diners', state: 'approved' };
    assert.equal(auth(wrongNetwork), false);
  });

  it('amounts are numbers and unknown fields are refused', () => {
    // @ts-expect-error amount is an integer, not text
    const text: AuthEvent = { ...purchase, amount: '25.00', state: 'approved' };
    assert.equal(auth(text), false);
    // @ts-expect-error additionalProperties: false
    const extra: AuthEvent = { ...purchase, state: 'approved', tip: 1 };
    assert.equal(auth(extra), false);
  });

  it('a field with a default is present in the type, because ajv fills it in', () => {
    const validate = compileBody<unknown>(groupInputSchema);
    const body: unknown = {
      externalId: 'household-42',
      cardholders: [{ externalId: 'c-1', cards: [{ externalId: 'k-1', last4: '4242', network: 'visa' }] }],
    };
    assert.equal(validate(body), true);
    const group = body as GroupInput;
    const status: 'active' | 'inactive' = group.status;
    const cardStatus: 'active' | 'inactive' = group.cardholders[0].cards[0].status;
    assert.deepEqual([status, cardStatus, group.settings], ['active', 'active', {}]);
  });

  it('null where a schema allows it, and only there', () => {
    const validate = compileBody<unknown>(issuerChangesSchema);
    const reset: IssuerChanges = { rateLimit: null };
    const one: IssuerChanges = { rateLimit: { eventsPerSecond: null } };
    assert.equal(validate(reset), true);
    assert.equal(validate(one), true);
    // @ts-expect-error a name cannot be reset
    const noName: IssuerChanges = { name: null };
    assert.equal(validate(noName), false);
  });

  it('a query reads as its coerced types, with its defaults', () => {
    const validate = compileQuery<unknown>(activityQuerySchema);
    const query: Record<string, unknown> = { type: 'cashback_earned' };
    assert.equal(validate(query), true);
    const typed = query as ActivityQuery;
    const limit: number = typed.limit;
    assert.equal(limit, 50);
    // @ts-expect-error limit is a number once coerced
    const text: ActivityQuery = { limit: '50' };
    assert.equal(text.limit, '50');
  });
});
