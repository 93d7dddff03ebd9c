// /openapi.json fit for client generation: a valid OpenAPI 3.1 document (checked by an
// independent validator), every success answer a named schema, every example valid against
// its schema, open reason lists open, and the committed openapi.json what the server serves.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { startTestApp, type TestApp } from '../helpers/app';
import { declaredRoutes } from '../helpers/routes';
import { contractViolation } from '../helpers/contract';
import { inlineRefs } from '../helpers/openapi-refs';
import { buildOpenApi } from '../../api/openapi';
import { OPENAPI_FILE, defaultOpenApi, serializeOpenApi } from '../../api/openapi-published';
import { createRateLimiter } from '../../api/middleware/rate-limit';
import { loadConfig } from '../../core/config';
import { defineRoute } from '../../api/route';
import { named } from '../../api/schemas/named';
import { SchemaComponents } from '../../api/openapi-components';

const REGENERATE =
  'the committed openapi.json is stale: run `npm run openapi` and commit openapi.json and clients/typescript/schema.ts';

const doc: any = buildOpenApi(declaredRoutes(), 'test');

/** Every JSON schema that is a 2xx answer of an operation, with where it is. */
function successSchemas(document: any): Array<{ where: string; schema: any }> {
  const found: Array<{ where: string; schema: any }> = [];
  for (const [path, ops] of Object.entries<any>(document.paths)) {
    for (const [method, op] of Object.entries<any>(ops)) {
      for (const [status, response] of Object.entries<any>(op.responses)) {
        const schema = response.content?.['application/json']?.schema;
        if (status.startsWith('2') && schema) found.push({ where: `${method} ${path} ${status}`, schema });
      }
    }
  }
  return found;
}

/** An Ajv that knows the document, so examples are checked against the very schemas it publishes. */
function documentAjv(document: any): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ ...document, $id: 'openapi' });
  return ajv;
}

function operationsOf(document: any): Array<{ path: string; method: string; op: any }> {
  return Object.entries<any>(document.paths).flatMap(([path, ops]) =>
    Object.entries<any>(ops).map(([method, op]) => ({ path, method, op })),
  );
}
const operations = operationsOf(doc);

const pointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/** Every example in the document with the schema it illustrates, as a $ref into the document. */
function examples(document: any): Array<{ where: string; ref: string; value: unknown }> {
  const found: Array<{ where: string; ref: string; value: unknown }> = [];
  for (const [name, schema] of Object.entries<any>(document.components.schemas)) {
    for (const value of schema.examples ?? [])
      found.push({ where: `components.schemas.${name}`, ref: `openapi#/components/schemas/${name}`, value });
  }
  for (const [kind, entries] of Object.entries<any>({
    parameters: document.components.parameters,
    headers: document.components.headers,
  })) {
    for (const [name, entry] of Object.entries<any>(entries)) {
      if (entry.example !== undefined)
        found.push({
          where: `components.${kind}.${name}`,
          ref: `openapi#/components/${kind}/${pointer(name)}/schema`,
          value: entry.example,
        });
    }
  }
  for (const [name, response] of Object.entries<any>(document.components.responses)) {
    const media = response.content?.['application/json'];
    if (media?.example !== undefined)
      found.push({
        where: `components.responses.${name}`,
        ref: `openapi#/components/responses/${name}/content/application~1json/schema`,
        value: media.example,
      });
  }
  for (const [type, hook] of Object.entries<any>(document.webhooks)) {
    const example = hook.post.requestBody.content['application/json'].example;
    found.push({
      where: `webhooks.${type}`,
      ref: `openapi#/webhooks/${type}/post/requestBody/content/application~1json/schema`,
      value: example,
    });
  }
  for (const { path, method, op } of operationsOf(document)) {
    const base = `openapi#/paths/${pointer(path)}/${method}`;
    op.parameters.forEach((p: any, i: number) => {
      if (p.example !== undefined)
        found.push({
          where: `${method} ${path} parameter ${p.name}`,
          ref: `${base}/parameters/${i}/schema`,
          value: p.example,
        });
    });
  }
  return found;
}

describe('/openapi.json for client generators', () => {
  it('is a valid OpenAPI 3.1 document for an independent validator (@seriousme/openapi-schema-validator)', async () => {
    const { Validator } = await import('@seriousme/openapi-schema-validator');
    const validator = new Validator();
    const result = await validator.validate(JSON.parse(JSON.stringify(doc)));
    assert.equal(validator.version, '3.1');
    assert.ok(result.valid, JSON.stringify(result.errors, null, 1)?.slice(0, 3000));
  });

  it('answers every success with a named schema of components.schemas, never an inline one', () => {
    const anonymous = successSchemas(doc).filter(
      ({ schema }) => !(typeof schema.$ref === 'string' && Object.keys(schema).length === 1),
    );
    assert.deepEqual(
      anonymous.map((s) => s.where),
      [],
      'name the schema where it is declared: named() in api/schemas/named.ts',
    );
    for (const { where, schema } of successSchemas(doc)) {
      assert.ok(
        doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')],
        `${where}: ${schema.$ref} names nothing`,
      );
    }
    assert.ok(successSchemas(doc).length >= 40);
  });

  it('fails the check above for a future route whose answer is anonymous', () => {
    const route = (schema: object) =>
      defineRoute({
        method: 'get',
        path: '/x',
        operationId: 'x',
        summary: 'x',
        tag: 'x',
        auth: 'none',
        responses: { 200: { description: 'x', schema } },
        handle: async () => undefined,
      });
    assert.equal(
      successSchemas(buildOpenApi([route({ type: 'object' })], 'x')).filter((s) => !s.schema.$ref).length,
      1,
    );
    assert.equal(
      successSchemas(buildOpenApi([route(named('Thing', { type: 'object' }))], 'x')).filter((s) => !s.schema.$ref)
        .length,
      0,
    );
    // A new error status gets a shared answer of its own, named or not.
    const future: any = buildOpenApi(
      [{ ...route(named('Thing', { type: 'object' })), auth: 'issuer', errorStatuses: [403, 418] }],
      'x',
    );
    assert.deepEqual(
      [future.paths['/x'].get.responses['403'].$ref, future.paths['/x'].get.responses['418'].$ref],
      ['#/components/responses/ForbiddenIssuer', '#/components/responses/Error418Issuer'],
    );
  });

  it('refuses two different schemas under one name, and takes a property called title for a property', () => {
    const components = new SchemaComponents();
    components.publish(named('Thing', { type: 'object' }));
    assert.throws(
      () => components.publish(named('Thing', { type: 'string' })),
      /two different schemas are named Thing/,
    );
    const offer = components.publish(named('Offer', { type: 'object', properties: { title: { type: 'string' } } }));
    assert.deepEqual(offer, { $ref: '#/components/schemas/Offer' });
    assert.deepEqual(components.schemas.Offer, {
      title: 'Offer',
      type: 'object',
      properties: { title: { type: 'string' } },
    });
  });

  it('has an example for every operation: of its request, its answer or its parameters', () => {
    const without: string[] = [];
    for (const { path, method, op } of operations) {
      const request = op.requestBody && inlineRefs(doc, op.requestBody.content['application/json'].schema);
      const answers = Object.entries<any>(op.responses)
        .filter(([status]) => status.startsWith('2'))
        .map(([, r]) => r.content?.['application/json']?.schema)
        .filter(Boolean)
        .map((s) => inlineRefs(doc, s));
      // A streamed answer (the NDJSON or CSV export) is illustrated by its own media types' schemas.
      const streamed = Object.entries<any>(op.responses)
        .filter(([status]) => status.startsWith('2'))
        .flatMap(([, r]) =>
          Object.entries<any>(r.content ?? {})
            .filter(([type]) => type !== 'application/json')
            .map(([, m]) => m.schema),
        )
        .filter((s) => s?.$ref)
        .map((s) => inlineRefs(doc, s));
      const parameters = op.parameters.filter((p: any) => p.in === 'path' && p.example !== undefined);
      const illustrated = [request, ...answers, ...streamed].some((s) => s && hasExample(s)) || parameters.length > 0;
      // Nothing to illustrate: no input, and an answer that is not JSON (the page, metrics, this document).
      const nothingToShow =
        !op.requestBody && answers.length === 0 && op.parameters.every((p: any) => p.in === 'header' || p.$ref);
      if (!illustrated && !nothingToShow) without.push(`${method} ${path}`);
    }
    assert.deepEqual(without, []);
  });

  it('holds examples that are valid against their schemas', () => {
    const ajv = documentAjv(doc);
    const found = examples(doc);
    assert.ok(found.length >= 60, `${found.length} examples`);
    const invalid: string[] = [];
    for (const { where, ref, value } of found) {
      const validate = ajv.compile({ $ref: ref });
      if (!validate(value)) invalid.push(`${where}: ${ajv.errorsText(validate.errors)}`);
    }
    assert.deepEqual(invalid, []);
  });

  it('documents the headers every answer carries: request id, rate limits, Idempotency-Key replays, Retry-After', () => {
    const chg = doc.paths['/api/v2/chg'].post.responses;
    assert.deepEqual(Object.keys(chg['201'].headers).sort(), [
      'Idempotent-Replayed',
      'RateLimit',
      'RateLimit-Policy',
      'X-Request-Id',
    ]);
    const errors = (status: string) => doc.components.responses[chg[status].$ref.split('/').pop()].headers;
    assert.ok(errors('409')['Retry-After'], 'idempotency_key_in_use says when to retry');
    assert.ok(errors('503')['Retry-After']);
    assert.ok(errors('401')['WWW-Authenticate']);
    assert.equal(errors('401').RateLimit, undefined, 'counted only once the token is known');
    for (const { path, method, op } of operations) {
      for (const [status, ref] of Object.entries<any>(op.responses)) {
        const response = ref.$ref ? doc.components.responses[ref.$ref.split('/').pop()] : ref;
        assert.ok(response.headers?.['X-Request-Id'], `${method} ${path} ${status}`);
      }
    }
  });

  it('publishes open reason lists that accept new values, while our own answers stay within the documented ones', () => {
    const reasons = doc.components.schemas.SpendEligibility.properties.spendRestrictionReasons.items;
    assert.equal(reasons.enum, undefined, 'a closed enum would make a generated client reject a new reason');
    assert.ok(reasons['x-extensible-enum'].includes('no_available_balance'));
    assert.match(reasons.description, /Clients must tolerate new values/);
    const body = {
      merchantId: 'mp_6f1c2a9e-4b7d-4e21-9c3a-000000000001',
      eligible: false,
      availableBalanceMinor: 0,
      pendingBalanceMinor: 0,
      currency: 'usd',
      spendRestrictionReasons: ['a_reason_added_later'],
    };
    const asClient = documentAjv(doc).compile({ $ref: 'openapi#/components/schemas/SpendEligibility' });
    assert.ok(asClient(body), 'a client validating with the published document accepts it');
    const path =
      '/api/v2/chg/chg_6f1c2a9e-4b7d-4e21-9c3a-000000000001/merchant/mp_6f1c2a9e-4b7d-4e21-9c3a-000000000001/spend-eligibility';
    assert.match(
      contractViolation('GET', path, 200, 'application/json', body) ?? '',
      /x-extensible-enum/,
      'the API tests would flag an undocumented reason',
    );
    for (const name of ['Eligibility', 'SpendEligibility', 'EventFailureError']) {
      assert.ok(JSON.stringify(doc.components.schemas[name]).includes('x-extensible-enum'), name);
    }
  });

  describe('the committed openapi.json', () => {
    let app: TestApp;
    before(async () => {
      // A server with the default configuration: the rate limits and the webhook schedule it publishes are the defaults.
      app = await startTestApp({ rateLimiter: createRateLimiter(loadConfig({}).rateLimits, { shared: false }) });
    });
    after(() => app.close());

    it('is what a server with the default configuration serves at /openapi.json', async () => {
      const committed = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8'));
      const served = (await app.request('GET', '/openapi.json')).body;
      assert.deepEqual(committed, served, REGENERATE);
    });

    it('is written byte for byte as `npm run openapi` writes it', () => {
      assert.ok(readFileSync(OPENAPI_FILE, 'utf8') === serializeOpenApi(defaultOpenApi()), REGENERATE);
    });
  });
});

function hasExample(schema: any): boolean {
  return Array.isArray(schema.examples) || (schema.oneOf ?? schema.anyOf ?? []).some((s: any) => hasExample(s));
}
