// Activation of a merchant for a group (SPEC.md 4.2, API.md): GET, PUT, DELETE (ours).
import { defineRoute, type RouteSpec } from '../route';
import { issuerOf } from '../middleware/auth';
import type { AppDeps } from '../deps';
import { activate, deactivate, readActivation } from './store';
import { requireGroup, requireVisibleMerchant } from '../catalogue/scope';
import { activationInputSchema, activationSchema } from './schemas';
import { presentActivation } from './present';

export function activationRoutes(deps: AppDeps): RouteSpec[] {
  const { db, clock } = deps;
  const tag = 'Activation';
  const path = '/api/v2/chg/{chgId}/merchant/{merchantId}/activation';
  const params = { chgId: 'chg', merchantId: 'mp' } as const;
  const response = { description: 'The activation.', schema: activationSchema };
  return [
    defineRoute({
      method: 'get',
      path,
      operationId: 'getActivation',
      summary: 'Current activation state (not_activated before any)',
      tag,
      auth: 'issuer',
      params,
      responses: { 200: response },
      errorStatuses: [404],
      async handle(ctx, { params: p }) {
        const issuerId = issuerOf(ctx).id;
        await requireGroup(db, issuerId, p.chgId);
        await requireVisibleMerchant(db, issuerId, p.merchantId);
        ctx.body = presentActivation(
          p.chgId,
          p.merchantId,
          await readActivation(db, { issuerId, chgId: p.chgId, merchantId: p.merchantId }),
        );
      },
    }),
    defineRoute({
      method: 'put',
      path,
      operationId: 'activateMerchant',
      summary: 'Activate the merchant for the group',
      description:
        '201 when this call makes the merchant active: the first time, or again after a DELETE (a new activatedAt); 200 when ' +
        'already active (idempotent: the first presentedOfferId is kept). presentedOfferId must be an active offer of this merchant: else 400 offer_not_of_merchant or ' +
        "offer_not_active. The body is required; send {} to activate without a presented offer. A deactivated group: 409 chg_inactive. The activation outlives the presented offer and serves the merchant's later offers.",
      tag,
      auth: 'issuer',
      params,
      body: activationInputSchema,
      responses: {
        201: { description: 'Activated, or reactivated after a DELETE.', schema: activationSchema },
        200: { description: 'Already active: nothing changed.', schema: activationSchema },
      },
      errorStatuses: [404, 409],
      async handle(ctx, { params: p, body }) {
        const key = { issuerId: issuerOf(ctx).id, chgId: p.chgId, merchantId: p.merchantId };
        const { activation, activated } = await activate(db, key, body.presentedOfferId, clock.now());
        ctx.status = activated ? 201 : 200;
        ctx.body = presentActivation(p.chgId, p.merchantId, activation);
      },
    }),
    defineRoute({
      method: 'delete',
      path,
      operationId: 'deactivateMerchant',
      summary: 'Deactivate the merchant for the group (idempotent)',
      description:
        'Later transactions at the merchant do not earn until it is activated again. Answers the activation as it now is; ' +
        'reading it later answers it too, status inactive with its deactivatedAt.',
      tag,
      auth: 'issuer',
      params,
      responses: { 200: response },
      errorStatuses: [404],
      async handle(ctx, { params: p }) {
        const key = { issuerId: issuerOf(ctx).id, chgId: p.chgId, merchantId: p.merchantId };
        ctx.body = presentActivation(p.chgId, p.merchantId, await deactivate(db, key, clock.now()));
      },
    }),
  ];
}
