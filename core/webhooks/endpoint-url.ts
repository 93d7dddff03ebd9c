// Which receiving addresses an issuer may configure, as written. Production issuers must use
// https (the body carries cardholder-related ids); sandbox issuers may use http for local
// receivers. Credentials in a URL would be stored and logged in clear, so they are refused.
// Where the URL points (ports, addresses) is core/webhooks/destination.ts's question.
import { fullFormats } from 'ajv-formats/dist/formats';
import type { FieldError } from '../errors';

export const MAX_WEBHOOK_URL_LENGTH = 2048;

/**
 * URL parsing silently drops tabs, CR and LF and trims spaces and controls at either end, so
 * the text stored would differ from the URL used; such text is refused instead. Spaces inside
 * must be percent-encoded like any other URL.
 */
const CONTROL_OR_SPACE = /[\u0000-\u0020\u007f-\u009f]/;

/** The URL, or why the text is not an acceptable webhook URL whatever the issuer. */
export function parseWebhookUrl(raw: string): { url: URL } | { problem: string } {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) return { problem: `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { problem: 'must be an absolute URL' };
  }
  if (CONTROL_OR_SPACE.test(raw)) return { problem: 'must not contain spaces or control characters (CR, LF, tab...)' };
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { problem: 'must use https (or http in sandbox)' };
  if (url.username || url.password) return { problem: 'must not contain credentials' };
  if (!url.hostname) return { problem: 'must name a host' };
  return { url };
}

export function webhookUrlProblems(raw: string, environment: 'sandbox' | 'production'): FieldError[] {
  const problem = (message: string): FieldError[] => [{ path: '/url', message }];
  const parsed = parseWebhookUrl(raw);
  if ('problem' in parsed) return problem(parsed.problem);
  if (parsed.url.protocol === 'http:' && environment === 'production')
    return problem('must use https for a production issuer');
  return [];
}

// ajv-formats' `uri`, the very check a JSON Schema validator applies to `format: uri`.
const isUri = fullFormats.uri as (text: string) => boolean;

/**
 * The reference publishes the URL with `format: uri`; the URL parser alone also takes what
 * RFC 3986 does not (a raw non-ASCII host, `{`, `|`), which a client validating against the
 * reference would refuse. Checked when a URL is saved, after where it points: a full-width
 * spelling of 127.0.0.1 is first of all a destination not allowed.
 */
export function uriSyntaxProblems(raw: string): FieldError[] {
  if (isUri(raw)) return [];
  return [
    {
      path: '/url',
      message: 'must be an RFC 3986 URI (a non-ASCII host name in punycode, other characters percent-encoded)',
    },
  ];
}
