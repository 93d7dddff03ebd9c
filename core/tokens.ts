// API token secrets: 32 random bytes, shown once, stored only as a SHA-256 hash.
// A fast hash is right here (unlike passwords): the secret has 256 bits of entropy.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A kind of token: its prefix, then 32 random bytes in base64url (43 characters). */
function tokenKind(prefix: string) {
  const format = new RegExp(`^${prefix}[A-Za-z0-9_-]{43}$`);
  return {
    generate: (): string => prefix + randomBytes(32).toString('base64url'),
    isWellFormed: (token: string): boolean => format.test(token),
  };
}

const issuerTokens = tokenKind('rwd_sk_');
export const generateToken = issuerTokens.generate;
export const isWellFormedToken = issuerTokens.isWellFormed;

// A named operator's token: the same secret, another prefix, so that neither kind of token is
// ever looked up as the other and a leaked one says at a glance what it opens.
const operatorTokens = tokenKind('rwd_op_');
export const generateOperatorToken = operatorTokens.generate;
export const isWellFormedOperatorToken = operatorTokens.isWellFormed;

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function safeEqualHex(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}
