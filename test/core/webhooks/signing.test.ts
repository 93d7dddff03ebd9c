import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import {
  generateSigningSecret,
  ROTATION_OVERLAP_MS,
  signatureHeaders,
  type EndpointSecrets,
} from '../../../core/webhooks/signing';
import { buildEnvelope } from '../../../core/webhooks/envelope';
import { webhookUrlProblems } from '../../../core/webhooks/endpoint-url';

const verifies = (secret: string, body: string, headers: object) => {
  try {
    new Webhook(secret).verify(body, headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
};

describe('core/webhooks signing', () => {
  const body = '{"webhookId":"evt_x"}';

  it('makes whsec_ secrets of 32 random bytes', () => {
    const secret = generateSigningSecret();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(Buffer.from(secret.slice(6), 'base64').length, 32);
    assert.notEqual(secret, generateSigningSecret());
  });

  it('signs with both secrets during the rotation overlap and only the new one after it', () => {
    const oldSecret = generateSigningSecret();
    const newSecret = generateSigningSecret();
    const rotatedAt = new Date('2026-11-22T10:00:00Z');
    const endpoint: EndpointSecrets = {
      secret: newSecret,
      previousSecret: oldSecret,
      previousSecretExpiresAt: new Date(rotatedAt.getTime() + ROTATION_OVERLAP_MS),
    };
    const signedAt = new Date(); // receivers check the timestamp against their own clock
    const during = signatureHeaders(
      endpoint,
      'evt_x',
      body,
      signedAt,
      new Date(rotatedAt.getTime() + ROTATION_OVERLAP_MS - 1),
    );
    assert.equal(during['webhook-signature'].split(' ').length, 2);
    assert.ok(
      during['webhook-signature'].startsWith(new Webhook(newSecret).sign('evt_x', signedAt, body)),
      'the new secret signs first',
    );
    assert.ok(verifies(newSecret, body, during));
    assert.ok(verifies(oldSecret, body, during));

    const after = signatureHeaders(
      endpoint,
      'evt_x',
      body,
      signedAt,
      new Date(rotatedAt.getTime() + ROTATION_OVERLAP_MS),
    );
    assert.equal(after['webhook-signature'].split(' ').length, 1);
    assert.ok(verifies(newSecret, body, after));
    assert.ok(!verifies(oldSecret, body, after));
  });

  it('carries the webhook id and unix-seconds timestamp in the headers', () => {
    const at = new Date('2026-11-22T10:00:00.999Z');
    const h = signatureHeaders(
      { secret: generateSigningSecret(), previousSecret: null, previousSecretExpiresAt: null },
      'evt_y',
      body,
      at,
    );
    assert.deepEqual([h['webhook-id'], h['webhook-timestamp']], ['evt_y', String(Math.floor(at.getTime() / 1000))]);
    assert.match(h['webhook-signature'], /^v1,[A-Za-z0-9+/]+=*$/);
  });
});

describe('core/webhooks envelope', () => {
  it('serialises the same webhook to the same bytes whatever the stored key order', () => {
    const createdAt = new Date('2026-11-22T10:00:00Z');
    const a = buildEnvelope({
      id: 'evt_1',
      type: 'qualified_settlement',
      createdAt,
      data: { b: 1, a: { d: 2, c: [3, { f: 1, e: 0 }] } },
    });
    const b = buildEnvelope({
      id: 'evt_1',
      type: 'qualified_settlement',
      createdAt,
      data: { a: { c: [3, { e: 0, f: 1 }], d: 2 }, b: 1 },
    });
    assert.equal(a, b);
    assert.deepEqual(Object.keys(JSON.parse(a)), ['createdAt', 'data', 'type', 'webhookId']);
    assert.equal(JSON.parse(a).createdAt, '2026-11-22T10:00:00.000Z');
  });
});

describe('core/webhooks endpoint URL', () => {
  it('requires https in production, allows http in sandbox, refuses credentials and non-URLs', () => {
    assert.deepEqual(webhookUrlProblems('https://hooks.example.com/x', 'production'), []);
    assert.deepEqual(webhookUrlProblems('http://127.0.0.1:8080/x', 'sandbox'), []);
    assert.match(webhookUrlProblems('http://hooks.example.com/x', 'production')[0].message, /https/);
    assert.match(webhookUrlProblems('https://user:pw@hooks.example.com/', 'sandbox')[0].message, /credentials/);
    assert.match(webhookUrlProblems('ftp://hooks.example.com/', 'sandbox')[0].message, /https/);
    assert.match(webhookUrlProblems('not a url', 'sandbox')[0].message, /absolute/);
    assert.match(webhookUrlProblems(`https://h.example.com/${'a'.repeat(2048)}`, 'sandbox')[0].message, /2048/);
  });
});
