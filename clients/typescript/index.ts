// A typed client of the API: openapi-fetch over the types openapi-typescript generates from the
// committed openapi.json (schema.ts, `npm run openapi`). Paths, parameters, bodies and answers
// are checked by the compiler; nothing here is written by hand but this wrapper.
import createClient from 'openapi-fetch';
import type { components, paths } from './schema';

export type { components, paths };
/** The named schemas of the API: `Schemas['Group']`, `Schemas['RewardDetail']`, ... */
export type Schemas = components['schemas'];

export interface RewardsClientOptions {
  /** Where the API listens, e.g. http://localhost:3000. */
  baseUrl: string;
  /** An issuer API token (rwd_sk_...) or the operator token. */
  token: string;
  fetch?: typeof globalThis.fetch;
}

export function createRewardsClient(options: RewardsClientOptions) {
  return createClient<paths>({
    baseUrl: options.baseUrl,
    headers: { authorization: `Bearer ${options.token}` },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}
