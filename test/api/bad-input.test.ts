// Malformed input of every kind gets a 4xx with a valid error object, never a 500, and
// leaves no trace in the database.
import assert from 'node:assert/strict';
import {
  startTestApp,
  newIssuer,
  assertError,
  type TestApp,
  type TestIssuer,
  type RequestOptions,
} from '../helpers/app';
import { groupBody, uniq } from '../helpers/groups';

interface Case {
  name: string;
  path?: string;
  method?: string;
  options: RequestOptions;
  status: number;
  reasonCode?: string;
  /** JSON pointer expected among details.errors. */
  errorPath?: string;
}

function nested(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = { n: value };
  return value;
}

function withCard(card: Record<string, unknown>) {
  return groupBody({
    cardholders: [
      { externalId: uniq('c'), cards: [{ externalId: uniq('k'), last4: '4242', network: 'visa', ...card }] },
    ],
  });
}

const CASES: Case[] = [
  { name: 'text/plain body', options: { raw: 'hello', headers: { 'content-type': 'text/plain' } }, status: 415 },
  {
    name: 'application/xml body',
    options: { raw: '<chg/>', headers: { 'content-type': 'application/xml' } },
    status: 415,
  },
  {
    name: 'form-encoded body',
    options: { raw: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
    status: 415,
  },
  { name: 'malformed JSON', options: { raw: '{"externalId": ' }, status: 400, reasonCode: 'invalid_json' },
  {
    name: 'trailing garbage after JSON',
    options: { raw: '{"externalId":"a"} x' },
    status: 400,
    reasonCode: 'invalid_json',
  },
  {
    name: 'invalid UTF-8 bytes',
    options: { raw: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]) },
    status: 400,
    reasonCode: 'invalid_json',
  },
  { name: 'missing body', options: {}, status: 400, reasonCode: 'invalid_body' },
  { name: 'empty object', options: { body: {} }, status: 400, reasonCode: 'invalid_body', errorPath: '/externalId' },
  { name: 'empty array', options: { body: [] }, status: 400, reasonCode: 'invalid_body' },
  { name: 'JSON null', options: { raw: 'null' }, status: 400, reasonCode: 'invalid_body' },
  { name: 'JSON number', options: { raw: '42' }, status: 400, reasonCode: 'invalid_body' },
  { name: 'JSON string', options: { raw: '"chg"' }, status: 400, reasonCode: 'invalid_body' },
  {
    name: 'externalId of the wrong type',
    options: { body: { ...groupBody(), externalId: 42 } },
    status: 400,
    errorPath: '/externalId',
  },
  {
    name: 'empty externalId',
    options: { body: { ...groupBody(), externalId: '' } },
    status: 400,
    errorPath: '/externalId',
  },
  {
    name: '10k-character externalId',
    options: { body: { ...groupBody(), externalId: 'x'.repeat(10_000) } },
    status: 400,
    errorPath: '/externalId',
  },
  {
    name: 'unicode externalId',
    options: { body: { ...groupBody(), externalId: 'héllo wörld' } },
    status: 400,
    errorPath: '/externalId',
  },
  {
    name: 'unknown top-level field',
    options: { body: { ...groupBody(), color: 'red' } },
    status: 400,
    errorPath: '/color',
  },
  {
    name: '__proto__ top-level key',
    options: { raw: JSON.stringify(groupBody()).replace(/^\{/, '{"__proto__":{"admin":true},') },
    status: 400,
    errorPath: '/__proto__',
  },
  {
    name: '__proto__ inside metadata',
    options: { raw: JSON.stringify(groupBody()).replace('"metadata":{', '"metadata":{"__proto__":{"x":1},') },
    status: 400,
  },
  {
    name: 'JSON nested 100 levels deep',
    options: { body: groupBody({ settings: { metadata: nested(100) } }) },
    status: 400,
    reasonCode: 'invalid_json',
  },
  {
    name: 'body over 1 MiB',
    options: { body: groupBody({ settings: { displayName: 'x'.repeat(1_100_000) } }) },
    status: 413,
  },
  { name: 'unknown status', options: { body: groupBody({ status: 'deleted' }) }, status: 400, errorPath: '/status' },
  {
    name: 'cardholders not an array',
    options: { body: groupBody({ cardholders: { a: 1 } }) },
    status: 400,
    errorPath: '/cardholders',
  },
  { name: 'no cardholders', options: { body: groupBody({ cardholders: [] }) }, status: 400, errorPath: '/cardholders' },
  {
    name: '101 cardholders',
    options: {
      body: groupBody({
        cardholders: Array.from({ length: 101 }, (_, i) => ({
          externalId: `c${i}`,
          cards: [{ externalId: `k${i}`, last4: '1111', network: 'visa' }],
        })),
      }),
    },
    status: 400,
    errorPath: '/cardholders',
  },
  {
    name: 'cardholder without cards',
    options: { body: groupBody({ cardholders: [{ externalId: uniq('c') }] }) },
    status: 400,
    errorPath: '/cardholders/0/cards',
  },
  {
    name: 'last4 with a letter',
    options: { body: withCard({ last4: '12a4' }) },
    status: 400,
    errorPath: '/cardholders/0/cards/0/last4',
  },
  {
    name: 'last4 of five digits',
    options: { body: withCard({ last4: '12345' }) },
    status: 400,
    errorPath: '/cardholders/0/cards/0/last4',
  },
  {
    name: 'last4 as a number',
    options: { body: withCard({ last4: 4242 }) },
    status: 400,
    errorPath: '/cardholders/0/cards/0/last4',
  },
  {
    name: 'unknown card network',
    options: { body: withCard({ network: 'jcb' }) },
    status: 400,
    errorPath: '/cardholders/0/cards/0/network',
  },
  {
    name: 'unknown card field',
    options: { body: withCard({ expiry: '12/29' }) },
    status: 400,
    errorPath: '/cardholders/0/cards/0/expiry',
  },
  {
    name: 'cardholder repeated in the body',
    options: {
      body: groupBody({
        cardholders: [
          { externalId: 'same', cards: [{ externalId: uniq('k'), last4: '1111', network: 'visa' }] },
          { externalId: 'same', cards: [{ externalId: uniq('k'), last4: '2222', network: 'visa' }] },
        ],
      }),
    },
    status: 400,
    errorPath: '/cardholders/1/externalId',
  },
  {
    name: 'card repeated across cardholders',
    options: {
      body: groupBody({
        cardholders: [
          { externalId: uniq('c'), cards: [{ externalId: 'k-same', last4: '1111', network: 'visa' }] },
          { externalId: uniq('c'), cards: [{ externalId: 'k-same', last4: '2222', network: 'visa' }] },
        ],
      }),
    },
    status: 400,
    errorPath: '/cardholders/1/cards/0/externalId',
  },
  {
    name: 'unknown time zone',
    options: { body: groupBody({ settings: { timezone: 'Mars/Olympus_Mons' } }) },
    status: 400,
    errorPath: '/settings/timezone',
  },
  {
    name: 'malformed locale',
    options: { body: groupBody({ settings: { locale: 'english please' } }) },
    status: 400,
    errorPath: '/settings/locale',
  },
  {
    name: 'settings as a string',
    options: { body: groupBody({ settings: 'dark-mode' }) },
    status: 400,
    errorPath: '/settings',
  },
  {
    name: 'NUL character in a string',
    options: { body: groupBody({ settings: { displayName: 'a\u0000b' } }) },
    status: 400,
    errorPath: '/settings/displayName',
  },
  {
    name: 'unpaired surrogate in a string',
    options: { raw: JSON.stringify(groupBody()).replace('The Smiths', '\\ud800x') },
    status: 400,
  },
  {
    name: '10k-character displayName',
    options: { body: groupBody({ settings: { displayName: 'y'.repeat(10_000) } }) },
    status: 400,
    errorPath: '/settings/displayName',
  },
  {
    name: 'metadata with 51 keys',
    options: {
      body: groupBody({
        settings: { metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])) },
      }),
    },
    status: 400,
    errorPath: '/settings/metadata',
  },
  {
    name: 'settings over 16 KiB',
    options: {
      body: groupBody({
        settings: { metadata: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'z'.repeat(1000)])) },
      }),
    },
    status: 400,
    errorPath: '/settings',
  },
  {
    name: 'bulk of 501 items',
    path: '/api/v2/chg/bulk-upsert',
    options: { body: { items: Array.from({ length: 501 }, () => ({})) } },
    status: 400,
    errorPath: '/items',
  },
  {
    name: 'bulk with no items',
    path: '/api/v2/chg/bulk-upsert',
    options: { body: { items: [] } },
    status: 400,
    errorPath: '/items',
  },
  {
    name: 'bulk items not an array',
    path: '/api/v2/chg/bulk-upsert',
    options: { body: { items: 'all' } },
    status: 400,
    errorPath: '/items',
  },
  { name: 'bulk body as a bare array', path: '/api/v2/chg/bulk-upsert', options: { body: [groupBody()] }, status: 400 },
  {
    name: 'unknown query parameter',
    method: 'GET',
    path: '/api/v2/chg/chg_00000000-0000-0000-0000-000000000000?expand=all',
    options: {},
    status: 400,
    reasonCode: 'invalid_query',
  },
  {
    name: 'malformed group id',
    method: 'GET',
    path: '/api/v2/chg/chg_XYZ',
    options: {},
    status: 400,
    reasonCode: 'invalid_id',
  },
  {
    name: 'uppercase UUID in a group id',
    method: 'GET',
    path: '/api/v2/chg/chg_0000000A-0000-0000-0000-000000000000',
    options: {},
    status: 400,
    reasonCode: 'invalid_id',
  },
  {
    name: 'group id with the wrong prefix',
    method: 'DELETE',
    path: '/api/v2/chg/ch_00000000-0000-0000-0000-000000000000',
    options: {},
    status: 400,
    reasonCode: 'invalid_id',
  },
  {
    name: 'unknown route',
    method: 'GET',
    path: '/api/v2/nothing-here',
    options: {},
    status: 404,
    reasonCode: 'route_not_found',
  },
  { name: 'wrong method', method: 'PUT', path: '/api/v2/chg', options: { body: groupBody() }, status: 405 },
];

describe('bad input', () => {
  let app: TestApp;
  let issuer: TestIssuer;
  before(async () => {
    app = await startTestApp();
    issuer = await newIssuer(app);
  });
  after(() => app.close());

  const counts = async () => ({
    groups: await app.db.cardholderGroup.count({ where: { issuerId: issuer.id } }),
    cardholders: await app.db.cardholder.count({ where: { issuerId: issuer.id } }),
    cards: await app.db.card.count({ where: { issuerId: issuer.id } }),
  });

  it(`rejects ${CASES.length} malformed requests with 4xx error objects and writes nothing`, async () => {
    assert.ok(CASES.length >= 30);
    const before = await counts();
    for (const c of CASES) {
      const res = await app.request(c.method ?? 'POST', c.path ?? '/api/v2/chg', { token: issuer.token, ...c.options });
      try {
        assertError(res, c.status, c.reasonCode);
        if (c.errorPath) {
          const paths = (res.body.details?.errors ?? []).map((e: { path: string }) => e.path);
          assert.ok(paths.includes(c.errorPath), `expected ${c.errorPath} among ${JSON.stringify(paths)}`);
        }
        assert.ok(!/at \w+ \(|prisma|postgres|SELECT /i.test(res.text), 'no internals in the body');
      } catch (err) {
        throw new Error(`case "${c.name}": ${(err as Error).message}`);
      }
    }
    assert.deepEqual(await counts(), before);
  });

  it('accepts well-formed unicode text where free text is allowed', async () => {
    const res = await issuer.call(
      'POST',
      '/api/v2/chg',
      groupBody({ settings: { displayName: 'Famille Dupré 👪 日本' } }),
    );
    assert.equal(res.status, 201);
    assert.equal(res.body.settings.displayName, 'Famille Dupré 👪 日本');
  });
});
