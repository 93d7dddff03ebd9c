// Ledger helpers for tests: a fresh issuer to post under, ids, and the health check every
// scenario ends with.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Db } from '../../prisma/client';
import { newId } from '../../core/ids';
import { ledgerInvariants } from '../../core/domain/ledger';

/** Fails with the list of violated ledger invariants (none in a healthy ledger). */
export async function assertLedgerHealthy(db: Db, issuerId?: string): Promise<void> {
  const violations = await ledgerInvariants(db, issuerId ? { issuerId } : {});
  assert.deepEqual(
    violations,
    [],
    `ledger invariants violated:\n${violations.map((v) => `- ${v.invariant}: ${v.subject} (${v.detail})`).join('\n')}`,
  );
}

/** An issuer row of its own, so ledger tests never see each other's accounts. */
export async function ledgerIssuer(db: Db): Promise<string> {
  const id = newId('iss');
  await db.issuer.create({ data: { id, name: `ledger test ${id}`, environment: 'sandbox' } });
  return id;
}

export const chgId = () => newId('chg');
export const merchantId = () => newId('mp');
export const key = (label = 'k') => `${label}:${randomUUID()}`;

export const DAY_MS = 86_400_000;
export const at = (iso = '2026-11-22T12:00:00.000Z') => new Date(iso);
export const plusDays = (d: Date, days: number) => new Date(d.getTime() + days * DAY_MS);
