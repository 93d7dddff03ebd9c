// Cardholder group routes (SPEC.md 4.1, API.md "Cardholder groups").
import { fromBody, linksTo } from '../links';
import { defineRoute, type RouteSpec } from '../route';
import { issuerOf } from '../middleware/auth';
import { ApiError } from '../../core/errors';
import { compileBody, toFieldErrors } from '../validation';
import { errors } from '../../core/errors';
import type { AppDeps } from '../deps';
import {
  bulkEnvelopeSchema,
  bulkInputSchema,
  bulkResultSchema,
  groupInputSchema,
  groupSchema,
  erasureSchema,
  type BulkEnvelope,
  type GroupInput,
} from './schemas';
import { checkGroupSemantics } from './semantics';
import { presentGroup } from './present';
import { eraseGroup, presentErasure } from './erase';
import { deactivateCard, deactivateCardholder, deactivateGroup, readGroup, upsertGroup } from './store';

const validateGroup = compileBody<GroupInput>(groupInputSchema);

// What the server refuses in a schema-valid group; the fuzz configuration (test/fuzz/schemathesis.toml) names it.
const GROUP_RULES_BEYOND_SCHEMA =
  'Beyond its schema a group must hold each cardholder externalId once and each card externalId once across all ' +
  'its cardholders (400 duplicate_external_id, `details.errors` pointing at the repeat), name a real IANA time zone ' +
  'in settings.timezone, and keep settings within 16 KiB serialized (400 invalid_body).';

const GROUP_REASON_CODES = {
  duplicate_external_id: 'a cardholder externalId, or a card externalId across the cardholders, given twice',
  invalid_body: 'also for settings.timezone that is no IANA time zone, or settings over 16 KiB serialized',
};

// Where a stored group's ids lead: the group itself, its catalogue and rewards, its first
// cardholder and card.
const GROUP_LINKS = {
  ...linksTo(
    [
      'getChg',
      'deactivateChg',
      'listMerchants',
      'listOffers',
      'getRewardsSummary',
      'listRewardsActivity',
      'listExpiringRewards',
      'getTransactionRewardOverviews',
    ],
    { chgId: fromBody('/id') },
  ),
  ...linksTo(['deactivateCardholder'], { chgId: fromBody('/id'), cardholderId: fromBody('/cardholders/0/id') }),
  ...linksTo(['deactivateCard'], {
    chgId: fromBody('/id'),
    cardholderId: fromBody('/cardholders/0/id'),
    cardId: fromBody('/cardholders/0/cards/0/id'),
  }),
};

const groupResponse = { description: 'The stored group.', schema: groupSchema };

export function chgRoutes(deps: AppDeps): RouteSpec[] {
  return [
    upsertChgRoute(deps),
    bulkUpsertChgRoute(deps),
    getChgRoute(deps),
    deactivateChgRoute(deps),
    deactivateCardholderRoute(deps),
    deactivateCardRoute(deps),
    eraseChgRoute(deps),
  ];
}

function upsertChgRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'post',
    path: '/api/v2/chg',
    operationId: 'upsertChg',
    summary: 'Create or update one cardholder group',
    description:
      'Upsert keyed by (issuer, externalId). Cardholders and cards absent from the body are soft-deactivated. ' +
      'A cardholder or card externalId active in another group of the issuer is a 409 external_id_conflict. ' +
      GROUP_RULES_BEYOND_SCHEMA,
    tag: 'Cardholder groups',
    auth: 'issuer',
    body: groupInputSchema,
    responses: {
      201: { description: 'Created.', schema: groupSchema, links: GROUP_LINKS },
      200: { description: 'Updated.', schema: groupSchema, links: GROUP_LINKS },
    },
    errorStatuses: [409],
    reasonCodes: { 400: GROUP_REASON_CODES },
    async handle(ctx, { body }) {
      checkGroupSemantics(body);
      const { created, group } = await upsertGroup(db, issuerOf(ctx).id, body, clock.now());
      ctx.status = created ? 201 : 200;
      ctx.body = presentGroup(group);
    },
  });
}

function bulkUpsertChgRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'post',
    path: '/api/v2/chg/bulk-upsert',
    operationId: 'bulkUpsertChg',
    summary: 'Create or update many cardholder groups',
    description:
      'Items (1 to 500) are independent: each is validated and stored in its own transaction, in order. ' +
      '200 when at least one item succeeded, 400 when all failed. Re-sending the batch is safe. An item fails alone ' +
      'when it breaks GroupInput, breaks a rule of the single upsert (its result then holds the error object the ' +
      'single upsert would answer, e.g. 409 external_id_conflict), or repeats an externalId. ' +
      GROUP_RULES_BEYOND_SCHEMA,
    tag: 'Cardholder groups',
    auth: 'issuer',
    documentedBody: bulkInputSchema,
    envelope: bulkEnvelopeSchema,
    responses: {
      200: {
        description: 'Per-item results.',
        schema: bulkResultSchema,
        links: linksTo(['getChg'], { chgId: fromBody('/results/0/id') }),
      },
      400: {
        description:
          'Every item failed (per-item results, each error with the reasonCode the single upsert would answer, ' +
          'duplicate_external_id included), or the batch itself is invalid (error object).',
        schema: { oneOf: [bulkResultSchema, { $ref: '#/components/schemas/Error' }] },
      },
    },
    async handle(ctx, { body }) {
      const issuerId = issuerOf(ctx).id;
      const results = [];
      for (const [index, item] of (body as BulkEnvelope).items.entries()) {
        try {
          if (!validateGroup(item)) {
            throw errors.validation(
              'invalid_body',
              `Item ${index} is invalid.`,
              toFieldErrors(validateGroup.errors, `/items/${index}`),
            );
          }
          checkGroupSemantics(item, `/items/${index}`);
          const { created, group } = await upsertGroup(db, issuerId, item, clock.now());
          results.push({ index, status: created ? 'created' : 'updated', id: group.id });
        } catch (err) {
          // Infrastructure failures abort the request (503/500); what was stored stays
          // stored and a retry of the whole batch is an idempotent upsert.
          if (!(err instanceof ApiError)) throw err;
          results.push({ index, status: 'failed', error: err.toBody() });
        }
      }
      ctx.status = results.some((r) => r.status !== 'failed') ? 200 : 400;
      ctx.body = { results };
    },
  });
}

function getChgRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/api/v2/chg/{chgId}',
    operationId: 'getChg',
    summary: 'Read one cardholder group, deactivated ones included',
    tag: 'Cardholder groups',
    auth: 'issuer',
    params: { chgId: 'chg' },
    responses: { 200: groupResponse },
    errorStatuses: [404],
    async handle(ctx, { params }) {
      ctx.body = presentGroup(await readGroup(db, issuerOf(ctx).id, params.chgId));
    },
  });
}

function deactivateChgRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'delete',
    path: '/api/v2/chg/{chgId}',
    operationId: 'deactivateChg',
    summary: 'Soft-deactivate a group with its cardholders and cards',
    description: 'The group stays readable; its merchant activations stop being usable. Re-activate with an upsert.',
    tag: 'Cardholder groups',
    auth: 'issuer',
    params: { chgId: 'chg' },
    responses: { 200: groupResponse },
    errorStatuses: [404],
    async handle(ctx, { params }) {
      ctx.body = presentGroup(await deactivateGroup(db, issuerOf(ctx).id, params.chgId, clock.now()));
    },
  });
}

function deactivateCardholderRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'delete',
    path: '/api/v2/chg/{chgId}/cardholder/{cardholderId}',
    operationId: 'deactivateCardholder',
    summary: 'Soft-deactivate one cardholder and its cards',
    description:
      'The cardholder stays in the group as read, inactive with its deactivatedAt. Re-activate with an upsert.',
    tag: 'Cardholder groups',
    auth: 'issuer',
    params: { chgId: 'chg', cardholderId: 'ch' },
    responses: { 200: groupResponse },
    errorStatuses: [404],
    async handle(ctx, { params }) {
      ctx.body = presentGroup(
        await deactivateCardholder(db, issuerOf(ctx).id, params.chgId, params.cardholderId, clock.now()),
      );
    },
  });
}

function deactivateCardRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'delete',
    path: '/api/v2/chg/{chgId}/cardholder/{cardholderId}/card/{cardId}',
    operationId: 'deactivateCard',
    summary: 'Soft-deactivate one card',
    description: 'The card stays in the group as read, inactive with its deactivatedAt. Re-activate with an upsert.',
    tag: 'Cardholder groups',
    auth: 'issuer',
    params: { chgId: 'chg', cardholderId: 'ch', cardId: 'card' },
    responses: { 200: groupResponse },
    errorStatuses: [404],
    async handle(ctx, { params }) {
      ctx.body = presentGroup(
        await deactivateCard(db, issuerOf(ctx).id, params.chgId, params.cardholderId, params.cardId, clock.now()),
      );
    },
  });
}

function eraseChgRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'post',
    path: '/api/v2/chg/{chgId}/erase',
    operationId: 'eraseChg',
    summary: "Erase a group's personal data, keeping its books",
    description:
      "In one transaction: the group's, its cardholders' and cards' externalId, last4, bin, settings and segments, and " +
      "its claims' and adjustments' notes, are replaced by tombstones; the group and everything in it is deactivated. " +
      'Ledger rows, balances, reward events and statements stay, under the same ids. Later events naming an erased ' +
      'externalId are refused chg_erased; webhook chg_erased goes to your endpoints. Calling it again answers the ' +
      'same erasure. Cannot be undone: an upsert with the old externalId creates a new group.',
    tag: 'Cardholder groups',
    auth: 'issuer',
    params: { chgId: 'chg' },
    responses: {
      202: {
        description: 'Erased (or erased already: the same record).',
        schema: erasureSchema,
        links: linksTo(['getChg'], { chgId: fromBody('/chgId') }),
      },
    },
    errorStatuses: [404],
    async handle(ctx, { params }) {
      const issuer = issuerOf(ctx);
      const who = { issuerId: issuer.id, tokenId: issuer.tokenId, requestId: (ctx.state.requestId as string) ?? null };
      ctx.status = 202;
      ctx.body = presentErasure(await eraseGroup(db, who, params.chgId, clock.now()));
    },
  });
}
