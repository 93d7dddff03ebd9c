// API token secrets: 32 random bytes, shown once, stored only as a SHA-256 hash.
// A fast hash is right here (unlike passwords): the secret has 256 bits of entropy.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const TOKEN_PREFIX = 'rwd_sk_';
const TOKEN_FORMAT = /^rwd_sk_[A-Za-z0-9_-]{43}$/;

export function generateToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

export function isWellFormedToken(token: string): boolean {
  return TOKEN_FORMAT.test(token);
}

// A named operator's token: the same secret, another prefix, so that neither kind of token is
// ever looked up as the other and a leaked one says at a glance what it opens.
const OPERATOR_TOKEN_PREFIX = 'rwd_op_';
const OPERATOR_TOKEN_FORMAT = /^rwd_op_[A-Za-z0-9_-]{43}$/;

export function generateOperatorToken(): string {
  return OPERATOR_TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

export function isWellFormedOperatorToken(token: string): boolean {
  return OPERATOR_TOKEN_FORMAT.test(token);
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function safeEqualHex(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}
