// Which receiving addresses an issuer may configure. Production issuers must use https
// (the body carries cardholder-related ids); sandbox issuers may use http for local
// receivers. Credentials in a URL would be stored and logged in clear, so they are refused.
import type { FieldError } from '../errors';

export const MAX_WEBHOOK_URL_LENGTH = 2048;

export function webhookUrlProblems(raw: string, environment: 'sandbox' | 'production'): FieldError[] {
  const problem = (message: string): FieldError[] => [{ path: '/url', message }];
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) return problem(`must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return problem('must be an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return problem('must use https (or http in sandbox)');
  if (url.protocol === 'http:' && environment === 'production') return problem('must use https for a production issuer');
  if (url.username || url.password) return problem('must not contain credentials');
  if (!url.hostname) return problem('must name a host');
  return [];
}
