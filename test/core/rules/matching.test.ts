import assert from 'node:assert/strict';
import { matchMerchant, type MatchableMerchant } from '../../../core/rules/matching';
import { normalizeDescriptor } from '../../../core/rules/descriptor';

const BLUE_BOTTLE = 'mp_00000000-0000-4000-8000-000000000001';
const AMAZON = 'mp_00000000-0000-4000-8000-000000000002';
const STARBUCKS = 'mp_00000000-0000-4000-8000-000000000003';
const TARGET = 'mp_00000000-0000-4000-8000-000000000004';
const SHELL = 'mp_00000000-0000-4000-8000-000000000005';
const MACYS = 'mp_00000000-0000-4000-8000-000000000006';
const SEVEN_ELEVEN = 'mp_00000000-0000-4000-8000-000000000007';
const BLUE_APRON = 'mp_00000000-0000-4000-8000-000000000008';

const merchant = (id: string, patterns: string[], extra: Partial<MatchableMerchant> = {}): MatchableMerchant => ({
  id,
  matchDescriptorPatterns: patterns,
  matchAcquirerMerchantIds: [],
  matchMccs: [],
  ...extra,
});

const CATALOGUE: MatchableMerchant[] = [
  merchant(BLUE_BOTTLE, ['BLUE BOTTLE', 'BLUE BOTTLE COFFEE'], { matchAcquirerMerchantIds: ['445566778899001'] }),
  merchant(AMAZON, ['AMZN MKTP', 'AMAZON', 'AMZN']),
  merchant(STARBUCKS, ['STARBUCKS']),
  merchant(TARGET, ['TARGET']),
  merchant(SHELL, ['SHELL OIL', 'SHELL'], { matchMccs: ['5541', '5542'] }),
  merchant(MACYS, ["MACY'S"]),
  merchant(SEVEN_ELEVEN, ['7-ELEVEN']),
  merchant(BLUE_APRON, ['BLUE APRON']),
];

describe('matchMerchant (production)', () => {
  const cases: Array<[string, string | null, string?]> = [
    ['SQ *BLUE BOTTLE 123', BLUE_BOTTLE],
    ['BLUEBOTTLE.COM', BLUE_BOTTLE],
    ['TST* BLUE BOTTLE COFFEE OAKLAND CA', BLUE_BOTTLE],
    ['BLUE BOTTLE COFFEE #0457 SAN FRANCISCO CA', BLUE_BOTTLE],
    ['PAYPAL *BLUEBOTTLE', BLUE_BOTTLE],
    ['sq *blue bottle', BLUE_BOTTLE],
    ['WWW.BLUEBOTTLECOFFEE.COM', BLUE_BOTTLE],
    ['AMZN Mktp US*2K4AB1234', AMAZON],
    ['AMAZON.COM*MK1LL0P21', AMAZON],
    ['AMZN.COM/BILL WA', AMAZON],
    ['Amazon.com', AMAZON],
    ['STARBUCKS STORE 12345', STARBUCKS],
    ['STARBUCKS 800-782-7282 WA', STARBUCKS],
    ['SP * STARBUCKS RESERVE', STARBUCKS],
    ['PY *STARBUCKS', STARBUCKS],
    ['TARGET 00012345 MINNEAPOLIS MN', TARGET],
    ['TARGET.COM  *', TARGET],
    ['SHELL OIL 57442651003 HOUSTON TX', SHELL, '5541'],
    ["MACY'S #123 NEW YORK NY", MACYS],
    ['MACYS .COM', MACYS],
    ['7-ELEVEN 35127', SEVEN_ELEVEN],
    ['BLUE APRON', BLUE_APRON],
    // Non-matches
    ['TARGETED ADS LLC', null],
    ['BLUE BAYOU CAFE', null],
    ['SQ *GREEN BOTTLE BAR', null],
    ['SHELL OIL 57442651003 HOUSTON TX', null, '5812'],
    ['UBER *TRIP HELP.UBER.COM', null],
    ['', null],
    ['STAR BAKERY', null],
  ];
  for (const [descriptor, expected, mcc] of cases) {
    it(`${expected ? 'matches' : 'does not match'} "${descriptor}"${mcc ? ` (MCC ${mcc})` : ''}`, () => {
      const result = matchMerchant({ merchantDescriptor: descriptor, mcc }, CATALOGUE, 'production');
      assert.equal(result.merchantId, expected, result.detail);
      assert.equal(result.rule, expected ? 'descriptor_pattern' : 'none');
    });
  }

  it('prefers the acquirer merchant id over the descriptor', () => {
    const result = matchMerchant(
      { merchantId: '445566778899001', merchantDescriptor: 'STARBUCKS 123' },
      CATALOGUE,
      'production',
    );
    assert.deepEqual([result.merchantId, result.rule], [BLUE_BOTTLE, 'acquirer_merchant_id']);
  });

  it('falls back to the descriptor when the acquirer id is unknown', () => {
    const result = matchMerchant({ merchantId: '999', merchantDescriptor: 'STARBUCKS 123' }, CATALOGUE, 'production');
    assert.deepEqual([result.merchantId, result.rule], [STARBUCKS, 'descriptor_pattern']);
  });

  it('explains an MCC rejection in the detail', () => {
    const result = matchMerchant({ merchantDescriptor: 'SHELL 123', mcc: '5812' }, CATALOGUE, 'production');
    assert.equal(result.merchantId, null);
    assert.match(result.detail, /rejected by MCC/);
  });

  it('ignores an mp_ id in production', () => {
    const result = matchMerchant(
      { merchantId: BLUE_BOTTLE, merchantDescriptor: 'NOTHING KNOWN' },
      CATALOGUE,
      'production',
    );
    assert.equal(result.merchantId, null);
  });

  it('picks the longest matching pattern when several merchants match', () => {
    const catalogue = [merchant(TARGET, ['BLUE']), merchant(BLUE_BOTTLE, ['BLUE BOTTLE'])];
    assert.equal(
      matchMerchant({ merchantDescriptor: 'BLUE BOTTLE 1' }, catalogue, 'production').merchantId,
      BLUE_BOTTLE,
    );
  });
});

describe('matchMerchant (sandbox)', () => {
  it('forces the match to the mp_ id given in merchantId', () => {
    const result = matchMerchant(
      { merchantId: STARBUCKS, merchantDescriptor: 'SQ *BLUE BOTTLE' },
      CATALOGUE,
      'sandbox',
    );
    assert.deepEqual([result.merchantId, result.rule], [STARBUCKS, 'sandbox_merchant_id']);
  });
  it('does not match an mp_ id outside the catalogue', () => {
    const result = matchMerchant(
      { merchantId: 'mp_00000000-0000-4000-8000-0000000000ff', merchantDescriptor: 'X' },
      CATALOGUE,
      'sandbox',
    );
    assert.equal(result.merchantId, null);
  });
  it('matches an event without an mp_ id by the rules, as in production', () => {
    const byDescriptor = matchMerchant({ merchantDescriptor: 'SQ *BLUE BOTTLE' }, CATALOGUE, 'sandbox');
    assert.deepEqual([byDescriptor.merchantId, byDescriptor.rule], [BLUE_BOTTLE, 'descriptor_pattern']);
    const byAcquirerId = matchMerchant(
      { merchantId: '445566778899001', merchantDescriptor: 'UNKNOWN' },
      CATALOGUE,
      'sandbox',
    );
    assert.deepEqual([byAcquirerId.merchantId, byAcquirerId.rule], [BLUE_BOTTLE, 'acquirer_merchant_id']);
    assert.equal(matchMerchant({ merchantDescriptor: 'NOTHING LIKE IT' }, CATALOGUE, 'sandbox').merchantId, null);
  });
});

describe('normalizeDescriptor', () => {
  it('strips processor prefixes, references, store numbers and state', () => {
    assert.equal(normalizeDescriptor('SQ *BLUE BOTTLE 123'), 'BLUE BOTTLE');
    assert.equal(normalizeDescriptor('TST* BLUE BOTTLE COFFEE OAKLAND CA'), 'BLUE BOTTLE COFFEE OAKLAND');
    assert.equal(normalizeDescriptor('AMZN Mktp US*2K4'), 'AMZN MKTP US');
    assert.equal(normalizeDescriptor('BLUEBOTTLE.COM'), 'BLUEBOTTLE');
    assert.equal(normalizeDescriptor("MACY'S #123"), 'MACYS');
  });
});
