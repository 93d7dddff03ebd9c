import assert from 'node:assert/strict';
import { createDb, type Db } from '../../../../prisma/client';
import { testDatabaseUrl } from '../../../helpers/env';
import { at, chgId, key, ledgerIssuer, merchantId } from '../../../helpers/ledger';
import { inTransaction, postTransfer, recordRewardEvent } from '../../../../core/domain/ledger';
import {
  isLedgerError,
  rewardEventTypeFor,
  LEDGER_IDEMPOTENCY_CONFLICT,
  LEDGER_INVALID_INPUT,
} from '../../../../core/ledger';

describe('core/domain/ledger recordRewardEvent', () => {
  let db: Db;
  before(() => (db = createDb(testDatabaseUrl(), 10)));
  after(() => db.$disconnect());

  it('records once per key and links the transfer in the same transaction', async () => {
    const issuerId = await ledgerIssuer(db);
    const p = { issuerId, chgId: chgId(), merchantId: merchantId() };
    const k = key('evt');
    const record = () =>
      inTransaction(db, async (tx) => {
        const { event, created } = await recordRewardEvent(tx, {
          ...p,
          idempotencyKey: k,
          type: rewardEventTypeFor('earn_cashback')!,
          amountMinor: 125,
          transactionId: 'txn_a',
          description: '5% back at the merchant',
          occurredAt: at(),
        });
        await postTransfer(tx, {
          ...p,
          kind: 'earn_cashback',
          amountMinor: 125,
          idempotencyKey: `${k}:transfer`,
          rewardEventId: event.id,
          transactionId: 'txn_a',
          at: at(),
        });
        return { event, created };
      });
    const first = await record();
    const again = await record();
    assert.equal(first.created, true);
    assert.equal(again.created, false);
    assert.equal(again.event.id, first.event.id);
    assert.match(first.event.id, /^brevt_/);
    assert.equal(first.event.currency, 'usd');
    assert.equal(await db.rewardEvent.count({ where: { issuerId } }), 1);
    assert.equal((await db.ledgerTransfer.findFirstOrThrow({ where: { issuerId } })).rewardEventId, first.event.id);
  });

  it('refuses the same key with other content, and invalid amounts', async () => {
    const issuerId = await ledgerIssuer(db);
    const base = {
      issuerId,
      chgId: chgId(),
      idempotencyKey: key(),
      type: 'cashback_earned' as const,
      amountMinor: 10,
      description: 'x',
      occurredAt: at(),
    };
    await inTransaction(db, (tx) => recordRewardEvent(tx, base));
    await assert.rejects(
      inTransaction(db, (tx) => recordRewardEvent(tx, { ...base, amountMinor: 11 })),
      (e) => isLedgerError(e, LEDGER_IDEMPOTENCY_CONFLICT),
    );
    await assert.rejects(
      inTransaction(db, (tx) => recordRewardEvent(tx, { ...base, type: 'branded_earned' })),
      (e) => isLedgerError(e, LEDGER_IDEMPOTENCY_CONFLICT),
    );
    await assert.rejects(
      inTransaction(db, (tx) => recordRewardEvent(tx, { ...base, idempotencyKey: key(), amountMinor: 0 })),
      (e) => isLedgerError(e, LEDGER_INVALID_INPUT),
    );
  });
});
