// The response check every API test goes through (test/helpers/app.ts) catches what it must:
// a body off its schema, a status its operation does not document; and lets a conforming
// answer pass.
import assert from 'node:assert/strict';
import { contractViolation } from './contract';

const CHG = '/api/v2/chg/chg_00000000-0000-0000-0000-000000000000';
const notFound = {
  code: 40400,
  httpStatusCode: 404,
  uuid: 'err_00000000-0000-0000-0000-000000000000',
  message: 'No group.',
  name: 'not_found',
  reasonCode: 'chg_not_found',
};

describe('the response contract check of the test helpers', () => {
  it('passes a conforming answer', () => {
    assert.equal(contractViolation('GET', CHG, 404, 'application/json; charset=utf-8', notFound), undefined);
  });

  it('catches a body off its schema, a literal route before a parameter one, and an undocumented status', () => {
    assert.match(
      contractViolation('GET', CHG, 200, 'application/json', { id: 5 }) ?? '',
      /get \/api\/v2\/chg\/\{chgId\} 200: .*required property 'externalId'/,
    );
    assert.match(
      contractViolation('POST', '/api/v2/chg/bulk-upsert', 200, 'application/json', { results: 'no' }) ?? '',
      /bulk-upsert 200: data\/results must be array/,
    );
    assert.match(
      contractViolation('GET', CHG, 418, 'application/json', {}) ?? '',
      /answered 418, which its operation does not document/,
    );
    assert.match(contractViolation('GET', CHG, 404, 'text/html', '<h1>') ?? '', /content type text\/html/);
  });

  it('checks a streamed NDJSON answer line by line, and a CSV one by its content type', () => {
    const EXPORT = '/api/v2/reward-events/export?from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z';
    const checksum = {
      record: 'checksum',
      from: '2026-11-01T00:00:00.000Z',
      to: '2026-11-02T00:00:00.000Z',
      generatedAt: '2026-11-02T00:00:00.000Z',
      count: 0,
      totals: [],
      digest: { algorithm: 'sha256', value: '0'.repeat(64) },
    };
    const ndjson = `${JSON.stringify(checksum)}\n`;
    assert.equal(
      contractViolation('GET', EXPORT, 200, 'application/x-ndjson; charset=utf-8', checksum, ndjson),
      undefined,
    );
    const planted = `${JSON.stringify({ record: 'reward_event', id: 'brevt_x' })}\n${ndjson}`;
    assert.match(
      contractViolation('GET', EXPORT, 200, 'application/x-ndjson', planted, planted) ?? '',
      /exportRewardEvents|reward-events\/export 200 application\/x-ndjson: /,
    );
    assert.equal(
      contractViolation(
        'GET',
        EXPORT,
        200,
        'text/csv; charset=utf-8; header=present',
        'record,id\r\n',
        'record,id\r\n',
      ),
      undefined,
    );
    assert.match(
      contractViolation('GET', EXPORT, 200, 'application/json', {}) ?? '',
      /documented application\/x-ndjson or text\/csv/,
    );
  });

  it('fails a rewards summary that breaks an identity its description states', () => {
    const summary = {
      chgId: 'chg_00000000-0000-0000-0000-000000000000',
      currency: 'usd',
      cashback: {
        earnedMinor: 500,
        clawedBackMinor: 100,
        adjustedMinor: 50,
        paidOutMinor: 0,
        pendingMinor: 0,
        onHoldMinor: 200,
        payableMinor: 250,
        balanceMinor: 450,
        owedMinor: 0,
      },
      brandedBalance: {
        earnedMinor: 300,
        adjustedMinor: 0,
        availableMinor: 100,
        notYetAvailableMinor: 100,
        spentMinor: 50,
        expiredMinor: 25,
        clawedBackMinor: 25,
      },
    };
    const path = `${CHG}/rewards/summary`;
    assert.equal(contractViolation('GET', path, 200, 'application/json', summary), undefined);
    const off = { ...summary, cashback: { ...summary.cashback, payableMinor: 200 } };
    assert.match(
      contractViolation('GET', path, 200, 'application/json', off) ?? '',
      /breaks cashback: balanceMinor = onHoldMinor \+ payableMinor \(450 != 400\)/,
    );
  });
});
