// Webhook signing per the Standard Webhooks specification (standardwebhooks.com), with the
// `standardwebhooks` package itself, so what we sign is exactly what issuers' off-the-shelf
// verifiers accept. During a secret rotation both secrets sign (new first), separated by a
// space, so a receiver still configured with the old secret keeps verifying for 24 h.
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** How long the previous secret keeps signing after a rotation (API.md, Webhooks). */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export interface EndpointSecrets {
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
}

export interface SignatureHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** `whsec_` + base64 of 32 random bytes: the secret format the libraries expect. */
export function generateSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The secrets that sign at `now`: the current one, and the previous one until it expires. */
export function activeSecrets(endpoint: EndpointSecrets, now: Date): string[] {
  const previousValid =
    endpoint.previousSecret !== null &&
    endpoint.previousSecretExpiresAt !== null &&
    endpoint.previousSecretExpiresAt.getTime() > now.getTime();
  return previousValid ? [endpoint.secret, endpoint.previousSecret!] : [endpoint.secret];
}

/**
 * The three Standard Webhooks headers for one attempt. `signedAt` is the attempt's own
 * time (receivers reject timestamps more than 5 minutes off), `now` decides which secrets
 * are active; they are separate so tests can move the rotation clock alone.
 */
export function signatureHeaders(
  endpoint: EndpointSecrets,
  webhookId: string,
  body: string,
  signedAt: Date,
  now: Date = signedAt,
): SignatureHeaders {
  const signatures = activeSecrets(endpoint, now).map((secret) => new Webhook(secret).sign(webhookId, signedAt, body));
  return {
    'webhook-id': webhookId,
    'webhook-timestamp': String(Math.floor(signedAt.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
