// Idempotency-Key over HTTP (API.md, "Safety and integration"): replays,
// refusals, scoping, concurrency, failures, expiry and cleanup, and the OpenAPI document.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { assertError, newIssuer, OPERATOR_TOKEN, startTestApp, type TestApp, type TestResponse } from '../helpers/app';
import { testDatabaseUrl } from '../helpers/env';
import { groupBody } from '../helpers/groups';
import { storedSecrets } from '../helpers/webhooks';
import { withSharedPartsInlined } from '../helpers/openapi-refs';
import { declaredRoutes } from '../helpers/routes';
import { cardOf, settledEvent } from '../helpers/events';
import { createToken } from '../../api/issuers/store';
import { createDb, type Db } from '../../prisma/client';
import { requestHash } from '../../core/idempotency';
import { deleteExpiredKeys } from '../../api/middleware/idempotency-store';

const ENDPOINT = '/api/v2/webhook-endpoint';
const ROTATE = '/api/v2/webhook-endpoint/rotate-secret';

function newKey(): string {
  return `key-${randomUUID()}`;
}

function replayed(res: TestResponse): boolean {
  return res.headers.get('idempotent-replayed') === 'true';
}

describe('Idempotency-Key', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(() => app.close());

  const keyed = (token: string, method: string, path: string, key: string, body?: unknown) =>
    app.request(method, path, { token, body, headers: { 'Idempotency-Key': key } });
  const createIssuer = (key: string | undefined, name: string) =>
    app.request('POST', '/admin/v1/issuers', {
      token: OPERATOR_TOKEN,
      body: { name, environment: 'sandbox' },
      headers: key === undefined ? {} : { 'Idempotency-Key': key },
    });
  const issuersNamed = (name: string) => app.db.issuer.count({ where: { name } });
  const endpointBody = () => ({ url: `https://hooks.example.com/${randomUUID()}` });

  describe('replay', () => {
    it('replays a lost 201 of PUT /api/v2/webhook-endpoint with the same signing secret', async () => {
      const issuer = await newIssuer(app);
      const key = newKey();
      const body = endpointBody();
      const first = await keyed(issuer.token, 'PUT', ENDPOINT, key, body);
      assert.equal(first.status, 201, first.text);
      assert.match(first.body.signingSecret, /^whsec_/);
      assert.equal(first.headers.get('idempotent-replayed'), null, 'a first answer is not a replay');

      const again = await keyed(issuer.token, 'PUT', ENDPOINT, key, body);
      assert.equal(again.status, 201);
      assert.ok(replayed(again));
      assert.deepEqual(again.body, first.body);
      assert.equal(again.headers.get('content-type'), first.headers.get('content-type'));
      assert.notEqual(
        again.headers.get('x-request-id'),
        first.headers.get('x-request-id'),
        "the request id is the retry's own",
      );
      const stored = await storedSecrets(app.db, issuer.id);
      assert.equal(stored.secret, first.body.signingSecret);
    });

    it('matches the same body sent in another key order and spacing', async () => {
      const issuer = await newIssuer(app);
      const key = newKey();
      const first = await keyed(issuer.token, 'PUT', ENDPOINT, key, {
        url: 'https://hooks.example.com/order',
        enabledTypes: ['qualified_auth'],
      });
      const raw = '{ "enabledTypes" : ["qualified_auth"], "url": "https://hooks.example.com/order" }';
      const again = await app.request('PUT', ENDPOINT, {
        token: issuer.token,
        raw,
        headers: { 'Idempotency-Key': key },
      });
      assert.ok(replayed(again), again.text);
      assert.deepEqual(again.body, first.body);
    });

    it('rotates the secret once when rotate-secret is retried with its key', async () => {
      const issuer = await newIssuer(app);
      const original = (await issuer.call('PUT', ENDPOINT, endpointBody())).body.signingSecret as string;
      const key = newKey();
      const first = await keyed(issuer.token, 'POST', ROTATE, key);
      assert.equal(first.status, 200, first.text);
      const again = await keyed(issuer.token, 'POST', ROTATE, key);
      assert.equal(again.status, 200);
      assert.ok(replayed(again));
      assert.equal(again.body.signingSecret, first.body.signingSecret);
      const stored = await storedSecrets(app.db, issuer.id);
      assert.equal(stored.secret, first.body.signingSecret, 'the secret the caller holds is the one that signs');
      assert.equal(stored.previousSecret, original, 'rotated once: the original secret still signs beside it');
    });

    it('creates one issuer when the operator retries POST /admin/v1/issuers', async () => {
      const key = newKey();
      const name = `Idempotent ${randomUUID()}`;
      const first = await createIssuer(key, name);
      assert.equal(first.status, 201, first.text);
      const again = await createIssuer(key, name);
      assert.equal(again.status, 201);
      assert.ok(replayed(again));
      assert.equal(again.body.id, first.body.id);
      assert.equal(await issuersNamed(name), 1);
    });

    it('replays a 204 with no body (ingestion) and keeps the answer, not the 1000-event request', async () => {
      const issuer = await newIssuer(app);
      const card = cardOf((await issuer.call('POST', '/api/v2/chg', groupBody())).body);
      const events = Array.from({ length: 1000 }, () =>
        settledEvent(card, { merchantDescriptor: `SHOP ${'X'.repeat(250)}` }),
      );
      const key = newKey();
      const first = await keyed(issuer.token, 'POST', '/api/v1/incoming-txn', key, events);
      assert.equal(first.status, 204, first.text.slice(0, 300));
      const again = await keyed(issuer.token, 'POST', '/api/v1/incoming-txn', key, events);
      assert.equal(again.status, 204);
      assert.equal(again.text, '');
      assert.ok(replayed(again));
      const row = await app.db.idempotencyKey.findFirstOrThrow({ where: { key } });
      assert.ok(JSON.stringify(events).length > 500_000, `${JSON.stringify(events).length} bytes sent`);
      assert.ok(row.response!.length < 1024, `stored ${row.response!.length} bytes`);
    });

    it('keeps the stored answer sealed: its secret is not readable in the database', async () => {
      const issuer = await newIssuer(app);
      const key = newKey();
      const created = await keyed(issuer.token, 'PUT', ENDPOINT, key, endpointBody());
      const row = await app.db.idempotencyKey.findFirstOrThrow({ where: { key } });
      assert.equal(row.status, 'completed');
      assert.equal(row.responseStatus, 201);
      const bytes = Buffer.from(row.response!);
      for (const encoding of ['latin1', 'utf8', 'base64', 'hex'] as const) {
        assert.ok(!bytes.toString(encoding).includes(created.body.signingSecret), encoding);
        assert.ok(!bytes.toString(encoding).includes(created.body.signingSecret.slice('whsec_'.length)), encoding);
      }
    });
  });

  describe('refusals', () => {
    it('answers 409 idempotency_key_reused to the same key with another body, and runs nothing', async () => {
      const key = newKey();
      const name = `Reused ${randomUUID()}`;
      assert.equal((await createIssuer(key, name)).status, 201);
      const other = await createIssuer(key, `${name} (other)`);
      assertError(other, 409, 'idempotency_key_reused');
      assert.deepEqual(other.body.details, {
        differs: ['body'],
        firstRequest: { method: 'POST', path: '/admin/v1/issuers' },
      });
      assert.equal(other.headers.get('idempotent-replayed'), null);
      assert.equal(await issuersNamed(`${name} (other)`), 0);
    });

    it('answers 409 idempotency_key_reused to the same key on another path, and runs nothing', async () => {
      const issuer = await newIssuer(app);
      const key = newKey();
      const created = await keyed(issuer.token, 'PUT', ENDPOINT, key, endpointBody());
      assert.equal(created.status, 201);
      const rotate = await keyed(issuer.token, 'POST', ROTATE, key);
      assertError(rotate, 409, 'idempotency_key_reused');
      assert.deepEqual(rotate.body.details.differs, ['method', 'path', 'body']);
      const stored = await storedSecrets(app.db, issuer.id);
      assert.equal(stored.secret, created.body.signingSecret, 'not rotated');
    });

    it('answers 400 invalid_idempotency_key to a malformed key, before running anything', async () => {
      const name = `Bad key ${randomUUID()}`;
      for (const key of ['', 'has space', 'x'.repeat(256), 'tab\tinside', 'two, keys']) {
        assertError(await createIssuer(key, name), 400, 'invalid_idempotency_key');
      }
      assert.equal(await issuersNamed(name), 0);
      const longest = await createIssuer('~'.repeat(255), name);
      assert.equal(longest.status, 201, longest.text);
      const issuer = await newIssuer(app);
      const read = await app.request('GET', '/api/v2/chg/chg_00000000-0000-0000-0000-000000000000', {
        token: issuer.token,
        headers: { 'Idempotency-Key': 'has space' },
      });
      assertError(read, 404, 'chg_not_found');
    });
  });

  describe('scope', () => {
    it('keeps keys per token: another token, of the same issuer or another, runs its own request', async () => {
      const issuer = await newIssuer(app);
      const other = await newIssuer(app);
      const second = (await createToken(app.db, issuer.id, 'second', 'test', new Date())).secret;
      const key = newKey();
      const body = endpointBody();
      const first = await keyed(issuer.token, 'PUT', ENDPOINT, key, body);
      assert.equal(first.status, 201);
      assert.ok(replayed(await keyed(issuer.token, 'PUT', ENDPOINT, key, body)), 'the same token replays');

      const sameIssuer = await keyed(second, 'PUT', ENDPOINT, key, body);
      assert.equal(sameIssuer.status, 200, 'ran as an update under the second token');
      assert.ok(!replayed(sameIssuer));
      assert.equal(sameIssuer.body.signingSecret, undefined);

      const otherIssuer = await keyed(other.token, 'PUT', ENDPOINT, key, body);
      assert.equal(otherIssuer.status, 201);
      assert.ok(!replayed(otherIssuer));
      assert.notEqual(otherIssuer.body.signingSecret, first.body.signingSecret);
      assert.equal(await app.db.idempotencyKey.count({ where: { key } }), 3);
    });
  });

  describe('concurrency', () => {
    it('answers 409 idempotency_key_in_use while the first request runs, then replays its answer', async () => {
      const key = newKey();
      const name = `Concurrent ${randomUUID()}`;
      const blocker = new pg.Client({ connectionString: testDatabaseUrl() });
      await blocker.connect();
      let first: Promise<TestResponse> | undefined;
      try {
        // Holds back every insert into issuer: the first request claims its key, then waits.
        await blocker.query('BEGIN');
        await blocker.query('LOCK TABLE "issuer" IN SHARE MODE');
        first = createIssuer(key, name);
        await waitFor(
          async () => (await app.db.idempotencyKey.findFirst({ where: { key } }))?.status === 'in_progress',
        );
        const second = await createIssuer(key, name);
        assertError(second, 409, 'idempotency_key_in_use');
        assert.equal(second.headers.get('retry-after'), '1');
      } finally {
        await blocker.query('COMMIT');
        await blocker.end();
      }
      const answered = await first!;
      assert.equal(answered.status, 201, answered.text);
      const retried = await createIssuer(key, name);
      assert.ok(replayed(retried));
      assert.equal(retried.body.id, answered.body.id);
      assert.equal(await issuersNamed(name), 1);
    });

    it('runs the handler once for requests sent together', async () => {
      for (let round = 0; round < 3; round++) {
        const key = newKey();
        const name = `Together ${randomUUID()}`;
        const answers = await Promise.all([createIssuer(key, name), createIssuer(key, name), createIssuer(key, name)]);
        const ran = answers.filter((a) => a.status === 201 && !replayed(a));
        assert.equal(ran.length, 1, answers.map((a) => `${a.status} ${a.text}`).join('\n'));
        for (const a of answers) {
          if (a === ran[0]) continue;
          if (a.status === 409) assertError(a, 409, 'idempotency_key_in_use');
          else assert.equal(a.body.id, ran[0].body.id);
        }
        assert.equal(await issuersNamed(name), 1);
      }
    });
  });

  describe('failures', () => {
    it('stores a 4xx answer and replays it, even once the request would succeed', async () => {
      const issuer = await newIssuer(app);
      const key = newKey();
      const refused = await keyed(issuer.token, 'POST', ROTATE, key);
      assertError(refused, 404, 'webhook_endpoint_not_found');
      const secret = (await issuer.call('PUT', ENDPOINT, endpointBody())).body.signingSecret;
      const again = await keyed(issuer.token, 'POST', ROTATE, key);
      assert.equal(again.status, 404);
      assert.ok(replayed(again));
      assert.deepEqual(again.body, refused.body, 'the very error object, uuid included');
      assert.equal((await storedSecrets(app.db, issuer.id)).secret, secret, 'not rotated');
    });

    it('claims no key for a request refused before it starts: the same key then carries the corrected body', async () => {
      const issuer = await newIssuer(app);
      const key = newKey();
      const body = groupBody();
      const refused = await keyed(issuer.token, 'POST', '/api/v2/chg', key, { ...body, cardholders: 'none' });
      assertError(refused, 400, 'invalid_body');
      const unreadable = await app.request('POST', '/api/v2/chg', {
        token: issuer.token,
        raw: '{"externalId":',
        headers: { 'Idempotency-Key': key },
      });
      assertError(unreadable, 400, 'invalid_json');
      const created = await keyed(issuer.token, 'POST', '/api/v2/chg', key, body);
      assert.equal(created.status, 201, created.text);
      assert.ok(!replayed(created));
      const again = await keyed(issuer.token, 'POST', '/api/v2/chg', key, body);
      assert.equal(again.status, 201);
      assert.ok(replayed(again), 'the request that ran holds the key');
    });

    describe('with a failing database', () => {
      let faulty: TestApp;
      let db: Db;
      const faults: Record<string, () => Promise<unknown>> = {};
      before(async () => {
        db = createDb(testDatabaseUrl(), 4);
        // Breaks the next call of a webhookEndpoint method named in `faults`, once.
        const delegate = new Proxy(db.webhookEndpoint, {
          get(target, prop, receiver) {
            const fault = typeof prop === 'string' ? faults[prop] : undefined;
            if (fault) {
              delete faults[prop as string];
              return fault;
            }
            const value = Reflect.get(target, prop, receiver);
            return typeof value === 'function' ? value.bind(target) : value;
          },
        });
        const broken = new Proxy(db, {
          get: (target, prop, receiver) =>
            prop === 'webhookEndpoint' ? delegate : Reflect.get(target, prop, receiver),
        }) as Db;
        faulty = await startTestApp({ db: broken });
      });
      after(async () => {
        await faulty.close();
        await db.$disconnect();
      });

      it('releases the key after a 500, so the retry runs', async () => {
        const issuer = await newIssuer(faulty);
        await issuer.call('PUT', ENDPOINT, endpointBody());
        const key = newKey();
        faults.findFirst = async () => {
          throw new Error('boom');
        };
        const failed = await faulty.request('POST', ROTATE, {
          token: issuer.token,
          headers: { 'Idempotency-Key': key },
        });
        assertError(failed, 500);
        assert.equal(await app.db.idempotencyKey.count({ where: { key } }), 0, 'released');
        const retried = await faulty.request('POST', ROTATE, {
          token: issuer.token,
          headers: { 'Idempotency-Key': key },
        });
        assert.equal(retried.status, 200, retried.text);
        assert.ok(!replayed(retried));
        assert.equal((await storedSecrets(app.db, issuer.id)).secret, retried.body.signingSecret);
        const third = await faulty.request('POST', ROTATE, {
          token: issuer.token,
          headers: { 'Idempotency-Key': key },
        });
        assert.ok(replayed(third), 'the answer of the run that succeeded is kept');
        assert.equal(third.body.signingSecret, retried.body.signingSecret);
      });

      it('does not keep a 409 that lost a race (retryable), so the retry runs', async () => {
        const issuer = await newIssuer(faulty);
        await issuer.call('PUT', ENDPOINT, endpointBody());
        const key = newKey();
        faults.updateMany = async () => ({ count: 0 });
        assertError(
          await faulty.request('POST', ROTATE, { token: issuer.token, headers: { 'Idempotency-Key': key } }),
          409,
          'webhook_endpoint_conflict',
        );
        const retried = await faulty.request('POST', ROTATE, {
          token: issuer.token,
          headers: { 'Idempotency-Key': key },
        });
        assert.equal(retried.status, 200, retried.text);
        assert.ok(!replayed(retried));
        assert.ok(
          replayed(await faulty.request('POST', ROTATE, { token: issuer.token, headers: { 'Idempotency-Key': key } })),
        );
      });
    });
  });

  describe('without the header', () => {
    it('runs every request and stores nothing', async () => {
      const name = `No key ${randomUUID()}`;
      const before = await app.db.idempotencyKey.count();
      const first = await createIssuer(undefined, name);
      const second = await createIssuer(undefined, name);
      assert.equal(first.status, 201);
      assert.equal(second.status, 201);
      assert.notEqual(first.body.id, second.body.id);
      assert.ok(!replayed(first) && !replayed(second));
      assert.equal(await issuersNamed(name), 2);
      assert.equal(await app.db.idempotencyKey.count(), before);
    });
  });

  describe('expiry and cleanup', () => {
    it('forgets a key after 24 hours: the retry runs again', async () => {
      const key = newKey();
      const name = `Expired ${randomUUID()}`;
      const first = await createIssuer(key, name);
      const row = await app.db.idempotencyKey.findFirstOrThrow({ where: { key } });
      const hours = (row.expiresAt.getTime() - row.createdAt.getTime()) / 3_600_000;
      assert.equal(hours, 24);
      await app.db
        .$executeRaw`UPDATE "idempotency_key" SET "expires_at" = now() - interval '1 second' WHERE "key" = ${key}`;
      const again = await createIssuer(key, name);
      assert.equal(again.status, 201);
      assert.ok(!replayed(again));
      assert.notEqual(again.body.id, first.body.id);
      assert.equal(await issuersNamed(name), 2);
      assert.ok(replayed(await createIssuer(key, name)), 'and the key holds the new answer');
    });

    it('lets a retry take over a claim whose request died (lease of 10 minutes)', async () => {
      const issuer = await newIssuer(app);
      const token = await app.db.apiToken.findFirstOrThrow({ where: { issuerId: issuer.id } });
      const body = endpointBody();
      const key = newKey();
      const claim = (lockedMinutesAgo: number, hash = requestHash({ query: {}, body })) =>
        app.db.$executeRaw`
          INSERT INTO "idempotency_key" ("scope", "key", "method", "path", "request_hash", "status", "claim_id", "locked_at", "expires_at")
          VALUES (${token.id}, ${key}, 'PUT', ${ENDPOINT}, ${hash}, 'in_progress', 'dead-process',
                  now() - ${lockedMinutesAgo}::integer * interval '1 minute', now() + interval '23 hours')
          ON CONFLICT ("scope", "key") DO UPDATE SET "locked_at" = EXCLUDED."locked_at", "request_hash" = EXCLUDED."request_hash"`;
      await claim(9);
      assertError(await keyed(issuer.token, 'PUT', ENDPOINT, key, body), 409, 'idempotency_key_in_use');
      await claim(11, 'f'.repeat(64));
      assertError(await keyed(issuer.token, 'PUT', ENDPOINT, key, body), 409, 'idempotency_key_reused');
      await claim(11);
      const taken = await keyed(issuer.token, 'PUT', ENDPOINT, key, body);
      assert.equal(taken.status, 201, taken.text);
      assert.ok(replayed(await keyed(issuer.token, 'PUT', ENDPOINT, key, body)));
    });

    it('deletes expired keys and keeps the others', async () => {
      const scope = `test-scope-${randomUUID()}`;
      const plant = (key: string, expiresInSeconds: number) =>
        app.db.$executeRaw`
          INSERT INTO "idempotency_key" ("scope", "key", "method", "path", "request_hash", "status", "claim_id", "locked_at", "expires_at")
          VALUES (${scope}, ${key}, 'POST', '/x', ${'0'.repeat(64)}, 'in_progress', 'c', now(), now() + ${expiresInSeconds}::integer * interval '1 second')`;
      await plant('old-1', -10);
      await plant('old-2', -1);
      await plant('live', 3600);
      assert.ok((await deleteExpiredKeys(app.db)) >= 2);
      assert.deepEqual(
        (await app.db.idempotencyKey.findMany({ where: { scope } })).map((r) => r.key),
        ['live'],
      );
    });

    it('runs the cleanup from the first keyed request of a process', async () => {
      const scope = `test-scope-${randomUUID()}`;
      await app.db.$executeRaw`
        INSERT INTO "idempotency_key" ("scope", "key", "method", "path", "request_hash", "status", "claim_id", "locked_at", "expires_at")
        VALUES (${scope}, 'old', 'POST', '/x', ${'0'.repeat(64)}, 'in_progress', 'c', now(), now() - interval '1 hour')`;
      const fresh = await startTestApp();
      try {
        const res = await fresh.request('POST', '/admin/v1/issuers', {
          token: OPERATOR_TOKEN,
          body: { name: `Cleanup ${randomUUID()}`, environment: 'sandbox' },
          headers: { 'Idempotency-Key': newKey() },
        });
        assert.equal(res.status, 201);
        await waitFor(async () => (await app.db.idempotencyKey.count({ where: { scope } })) === 0);
      } finally {
        await fresh.close();
      }
    });
  });

  describe('GET /openapi.json', () => {
    it('documents Idempotency-Key on every POST, PUT, PATCH and DELETE, and the replay header on their answers', async () => {
      const doc = withSharedPartsInlined((await app.request('GET', '/openapi.json')).body);
      const keyRequired = new Set(declaredRoutes().flatMap((r) => (r.idempotencyKeyRequired ? [r.operationId] : [])));
      assert.ok(keyRequired.has('createAdjustment') && keyRequired.has('payStatement'), [...keyRequired].join(', '));
      let keyedOperations = 0;
      for (const [path, operations] of Object.entries<any>(doc.paths)) {
        for (const [method, op] of Object.entries<any>(operations)) {
          const parameter = op.parameters.find((p: any) => p.name === 'Idempotency-Key');
          if (method === 'get') {
            assert.equal(parameter, undefined, `${method} ${path}`);
            continue;
          }
          keyedOperations++;
          // Postings that must never run twice (an adjustment, a payout, a statement run or payment)
          // require the key: their routes say so.
          const required = keyRequired.has(op.operationId);
          assert.deepEqual(
            parameter && { in: parameter.in, required: parameter.required, pattern: parameter.schema.pattern },
            { in: 'header', required, pattern: '^[!-~]{1,255}$' },
            `${method} ${path}`,
          );
          assert.match(
            op.responses['409'].description,
            /idempotency_key_reused.*idempotency_key_in_use/,
            `${method} ${path}`,
          );
          assert.match(op.responses['400'].description, /invalid_idempotency_key/, `${method} ${path}`);
          for (const [status, response] of Object.entries<any>(op.responses)) {
            // A 429, and an operator's 403 (the role), are answered before the key is looked at, so
            // they are never a replay.
            const beforeKey = Number(status) === 429 || (path.startsWith('/admin/') && Number(status) === 403);
            if (Number(status) < 500 && !beforeKey)
              assert.ok(response.headers?.['Idempotent-Replayed'], `${method} ${path} ${status}`);
            if (beforeKey)
              assert.equal(response.headers?.['Idempotent-Replayed'], undefined, `${method} ${path} ${status}`);
          }
        }
      }
      assert.ok(keyedOperations >= 20, `${keyedOperations} keyed operations`);
    });
  });
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
