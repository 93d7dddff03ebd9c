// Card numbers are refused wherever a request carries them, and echoed nowhere (decision 0054):
// bodies, batch items one by one, the query string, the Idempotency-Key; the access log and a 404
// write the path with the number replaced; a caller's request id holding one is replaced.
import assert from 'node:assert/strict';
import pino from 'pino';
import type { Logger } from '../../core/logger';
import { startTestApp, newIssuer, assertError, type TestApp, type TestIssuer, type TestResponse } from '../helpers/app';
import { groupBody } from '../helpers/groups';
import { newId } from '../../core/ids';
import { cardOf, settledEvent } from '../helpers/events';

const PAN = '4111111111111111';
const DIGITS = /4111.?1111.?1111.?1111/;

describe('card numbers in requests', () => {
  const lines: string[] = [];
  let app: TestApp;
  let issuer: TestIssuer;
  before(async () => {
    const logger: Logger = pino({ level: 'info' }, { write: (l: string) => lines.push(l) });
    app = await startTestApp({ logger });
    issuer = await newIssuer(app);
  });
  after(() => app.close());

  const refused = (res: TestResponse, path: string) => {
    assertError(res, 422, 'pan_detected');
    assert.deepEqual(res.body.details, { errors: [{ path, message: 'holds a card number' }] });
    assert.doesNotMatch(res.text, DIGITS);
  };

  it('refuses a body holding one in any field or key, storing nothing, and accepts digits that are not one', async () => {
    const external = `household-${PAN}`;
    refused(await issuer.call('POST', '/api/v2/chg', groupBody({ externalId: external })), '/externalId');
    assert.equal(await app.db.cardholderGroup.count({ where: { externalId: external } }), 0);
    const dashed = groupBody({ settings: { metadata: { note: 'card 4111-1111-1111-1111' } } });
    refused(await issuer.call('POST', '/api/v2/chg', dashed), '/settings/metadata/note');
    const keyed = groupBody({ settings: { metadata: { [PAN]: 'x' } } });
    refused(await issuer.call('POST', '/api/v2/chg', keyed), '/settings/metadata/[card number]');
    // Not a card number: a Luhn failure, a UUID, a long reference.
    const fine = groupBody({
      settings: {
        metadata: { a: '4111111111111112', b: '12345678-9012-3456-7890-123456789012', c: '41111111111111111111111110' },
      },
    });
    assert.equal((await issuer.call('POST', '/api/v2/chg', fine)).status, 201);
  });

  it('fails only the event of a batch that holds one, without echoing an id that is the field', async () => {
    const group = (await issuer.call('POST', '/api/v2/chg', groupBody())).body;
    const card = cardOf(group);
    const good = settledEvent(card);
    const inDescriptor = settledEvent(card, { merchantDescriptor: `SHOP ${PAN}` });
    const asId = settledEvent(card, { id: `txn-${PAN}` });
    // An acquirer's 15-digit merchant id that happens to pass Luhn is the merchant's, not a card's.
    const atMid = settledEvent(card, { merchantId: '000001234567897' });
    const res = await issuer.call('POST', '/api/v1/incoming-txn', [good, inDescriptor, asId, atMid]);
    assert.equal(res.status, 200, res.text);
    assert.doesNotMatch(res.text, DIGITS);
    assert.deepEqual(
      res.body.map((f: any) => [f.index, f.id, f.error.reasonCode, f.error.details.errors[0].path]),
      [
        [1, inDescriptor.id, 'pan_detected', '/merchantDescriptor'],
        [2, null, 'pan_detected', '/id'],
      ],
    );
    const stored = await app.db.ingestedEvent.findMany({
      where: { issuerId: issuer.id },
      select: { externalId: true },
    });
    assert.deepEqual(stored.map((e) => e.externalId).sort(), [good.id, atMid.id].sort());
  });

  it('refuses one in the query string or the Idempotency-Key, before either is echoed or kept', async () => {
    const chgId = (await issuer.call('POST', '/api/v2/chg', groupBody())).body.id;
    refused(await issuer.call('GET', `/api/v2/chg/${chgId}/merchants?q=${PAN}`), '/q');
    refused(await issuer.call('GET', `/api/v2/chg/${chgId}/merchants?${PAN}=1`), '/');
    const keyed = await app.request('POST', '/api/v2/chg', {
      token: issuer.token,
      body: groupBody(),
      headers: { 'Idempotency-Key': `key-${PAN}` },
    });
    refused(keyed, '/headers/Idempotency-Key');
    // A parameter typed as a number is an amount, whatever its digits.
    const amount = await issuer.call(
      'GET',
      `/api/v2/chg/${chgId}/merchant/${newId('mp')}/spend-eligibility?amountMinor=${PAN}`,
    );
    assertError(amount, 404, 'merchant_not_found');
  });

  it('writes a path holding one with the number replaced, and replaces a request id holding one', async () => {
    lines.length = 0;
    const res = await app.request('GET', `/api/v2/nothing/${PAN}`, {
      token: issuer.token,
      headers: { 'X-Request-Id': `r-${PAN}` },
    });
    assertError(res, 404, 'route_not_found');
    assert.doesNotMatch(res.text, DIGITS);
    assert.match(res.headers.get('x-request-id') ?? '', /^req_/);
    await new Promise((r) => setTimeout(r, 50));
    const access = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'request');
    assert.equal(access?.path, '/api/v2/nothing/[card number]');
    assert.doesNotMatch(lines.join('\n'), DIGITS);
  });
});
