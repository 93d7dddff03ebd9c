// What a purchase needs before it is sent, built through the API as an operator and an issuer
// build it: an issuer, a group with one cardholder and one card, a merchant with one live offer in
// the shared catalogue (unique names, so tests never see each other's rows), and the merchant
// activated for the group. purchaseScenario builds the whole of it; the pieces are here for the
// tests that share one merchant between issuers or give one group several merchants.
import assert from 'node:assert/strict';
import { newIssuer, type TestApp, type TestIssuer } from './app';
import { createMerchant, createOffer } from './catalogue';
import { cardOf, type CardRef } from './events';
import { groupBody } from './groups';

export interface IssuerSetup {
  /** A sandbox issuer (its own clock, events name the merchant's id) unless told. */
  environment?: 'sandbox' | 'production';
  /** Settings an operator sets (PATCH /admin/v1/issuers/{id}): cashbackHoldDays, brandedAvailabilityDelayDays... */
  settings?: Record<string, unknown>;
}

/** The terms of a merchant's branded balance; those not given: no minimum, available at once, 365 days to expiry. */
export interface BrandedBalanceTerms {
  spendMinimumMinor?: number;
  availabilityDelayDays?: number;
  expiryDays?: number;
}

export interface MerchantSetup {
  /** The merchant gives branded balance (on these terms, when given); without it, cashback only. */
  brandedBalance?: true | BrandedBalanceTerms;
  /** How a production issuer's events find the merchant (a sandbox event names the merchant's id). */
  matchRules?: { descriptorPatterns?: string[]; acquirerMerchantIds?: string[]; mccs?: string[] };
  /** The offer's terms beyond createOffer's: 5 % cashback, no branded balance, started 10 days ago, no end. */
  offer?: Record<string, unknown>;
}

export type ScenarioSetup = IssuerSetup & MerchantSetup & { presentedOffer?: boolean };

export interface PurchaseScenario {
  issuer: TestIssuer;
  /** The group as the API stored it. */
  group: any;
  /** Its one card, as events name it. */
  card: CardRef;
  merchant: any;
  offer: any;
}

/**
 * An issuer whose group has activated a merchant with one live offer: where a purchase test starts.
 * `presentedOffer` records the offer as the one the activation came through (presentedOfferId).
 */
export async function purchaseScenario(app: TestApp, setup: ScenarioSetup = {}): Promise<PurchaseScenario> {
  const issuer = await issuerWith(app, setup);
  const { group, card } = await groupWithCard(issuer);
  const { merchant, offer } = await merchantWithOffer(app, setup);
  await activate(issuer, group.id, merchant.id, setup.presentedOffer ? offer.id : undefined);
  return { issuer, group, card, merchant, offer };
}

/** A new issuer with its API token, and the operator's settings when given. */
export async function issuerWith(app: TestApp, setup: IssuerSetup = {}): Promise<TestIssuer> {
  const issuer = await newIssuer(app, setup.environment ?? 'sandbox');
  if (setup.settings) {
    const res = await app.operator('PATCH', `/admin/v1/issuers/${issuer.id}`, setup.settings);
    assert.equal(res.status, 200, res.text);
    for (const [name, value] of Object.entries(setup.settings)) assert.deepEqual(res.body[name], value, name);
  }
  return issuer;
}

/** A new group of one cardholder with one card, stored through the API. */
export async function groupWithCard(issuer: TestIssuer): Promise<{ group: any; card: CardRef }> {
  const res = await issuer.call('POST', '/api/v2/chg', groupBody());
  assert.equal(res.status, 201, res.text);
  return { group: res.body, card: cardOf(res.body) };
}

/** A new merchant of the shared catalogue with one live offer, created by the operator. */
export async function merchantWithOffer(
  app: TestApp,
  setup: MerchantSetup = {},
): Promise<{ merchant: any; offer: any }> {
  const merchant = await createMerchant(app, {
    ...(setup.brandedBalance && {
      brandedBalance: {
        enabled: true,
        spendMinimumMinor: 0,
        availabilityDelayDays: 0,
        expiryDays: 365,
        ...(setup.brandedBalance === true ? {} : setup.brandedBalance),
      },
    }),
    ...(setup.matchRules && { matchRules: setup.matchRules }),
  });
  const offer = await createOffer(app, merchant.id, setup.offer);
  return { merchant, offer };
}

/** A new merchant with one live offer (merchantWithOffer), activated for the group. */
export async function activatedMerchant(
  app: TestApp,
  issuer: TestIssuer,
  chgId: string,
  setup: MerchantSetup = {},
): Promise<{ merchant: any; offer: any }> {
  const created = await merchantWithOffer(app, setup);
  await activate(issuer, chgId, created.merchant.id);
  return created;
}

/** Activates the merchant for the group (through the offer presented, when given). */
export async function activate(
  issuer: TestIssuer,
  chgId: string,
  merchantId: string,
  presentedOfferId?: string,
): Promise<void> {
  const res = await issuer.call(
    'PUT',
    `/api/v2/chg/${chgId}/merchant/${merchantId}/activation`,
    presentedOfferId ? { presentedOfferId } : {},
  );
  assert.equal(res.status, 201, res.text);
}
