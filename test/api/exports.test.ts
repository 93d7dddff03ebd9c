// The reward-events export: it reconciles with the rewards summaries and the activity feed of
// the same period, its checksum line verifies, the period is [from, to), issuers see only their
// own events, bad queries are 400s; and 10,000 events stream through keyset pages of bounded
// size, read only as fast as the client takes them, with the connection given back however the
// export ends.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import http from 'node:http';
import { startTestApp, newIssuer, assertError, type TestApp, type TestIssuer } from '../helpers/app';
import { assertLedgerHealthy, chgId as newChgId, merchantId as newMerchantId } from '../helpers/ledger';
import { createGroup, createMerchant, walkPages } from '../helpers/catalogue';
import {
  brandedEarned,
  brandedSpent,
  bulkCashbackEarned,
  cashbackClawedBack,
  cashbackEarned,
} from '../helpers/reward-fixtures';
import { testDatabaseUrl } from '../helpers/env';
import { expireDueGrants } from '../../activities/expiry';
import { createLogger } from '../../core/logger';
import { createDb } from '../../prisma/client';
import { EXPORT_HIGH_WATER_MARK, openRewardEventExport } from '../../api/exports/stream';
import { CSV_COLUMNS } from '../../api/exports/format';

const DAY_MS = 86_400_000;

interface ParsedExport {
  rows: any[];
  checksum: any;
}

/** Splits an export into its rows and checksum, asserting the digest covers every byte before the last line. */
function parseNdjson(text: string): ParsedExport {
  assert.ok(text.endsWith('\n'), 'the export ends with a line end');
  const lastStart = text.lastIndexOf('\n', text.length - 2) + 1;
  const checksum = JSON.parse(text.slice(lastStart));
  assert.equal(checksum.record, 'checksum');
  assert.equal(
    createHash('sha256').update(text.slice(0, lastStart)).digest('hex'),
    checksum.digest.value,
    'digest of every byte before the checksum line',
  );
  const rows = text
    .slice(0, lastStart)
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));
  assertTotals(rows, checksum);
  return { rows, checksum };
}

/** The checksum's count and per type/currency totals are those of the rows. */
function assertTotals(rows: any[], checksum: { count: number; totals: any[] }): void {
  assert.equal(checksum.count, rows.length);
  const totals = new Map<string, { type: string; currency: string; count: number; amountMinor: number }>();
  for (const r of rows) {
    const t = totals.get(`${r.type} ${r.currency}`) ?? { type: r.type, currency: r.currency, count: 0, amountMinor: 0 };
    t.count += 1;
    t.amountMinor += r.amountMinor;
    totals.set(`${r.type} ${r.currency}`, t);
  }
  assert.deepEqual(
    checksum.totals,
    [...totals.values()].sort((a, b) => (a.type < b.type ? -1 : 1)),
  );
}

const perType = (checksum: any) => Object.fromEntries(checksum.totals.map((t: any) => [t.type, t.amountMinor]));

describe('GET /api/v2/reward-events/export', () => {
  let app: TestApp;
  let issuer: TestIssuer;
  let other: TestIssuer;
  let groups: string[];
  const times: Date[] = [];
  const start = new Date(Date.now() - 10 * 60_000);
  const exportPath = (from: Date, to: Date, format?: string) =>
    `/api/v2/reward-events/export?from=${from.toISOString()}&to=${to.toISOString()}${format ? `&format=${format}` : ''}`;
  let from: Date;
  let to: Date;

  before(async () => {
    app = await startTestApp();
    issuer = await newIssuer(app);
    other = await newIssuer(app);
    const merchantId = (await createMerchant(app)).id;
    groups = [await createGroup(issuer), await createGroup(issuer)];
    for (let i = 0; i < 7; i++) times.push(new Date(start.getTime() + i * 1000));
    const [g1, g2] = groups.map((chgId) => ({ issuerId: issuer.id, chgId, merchantId }));
    const expiresAt = new Date(Date.now() + 30 * DAY_MS);
    await cashbackEarned(app.db, { ...g1, at: times[0] }, 120);
    await brandedEarned(app.db, { ...g1, at: times[1] }, 700, { expiresAt });
    await brandedSpent(app.db, { ...g1, at: times[2] }, 300);
    await cashbackClawedBack(app.db, { ...g1, at: times[3] }, 50);
    await cashbackEarned(app.db, { ...g2, at: times[4] }, 80);
    // Earned, then expired by the hourly job: a branded_expired event posted now.
    await brandedEarned(app.db, { ...g2, at: times[5] }, 60, { expiresAt: new Date(Date.now() - 1000) });
    await expireDueGrants(
      { db: app.db, logger: createLogger('silent') },
      { atMs: Date.now(), batchSize: 10, issuerId: issuer.id },
    );
    // Another issuer's event in the same period.
    await cashbackEarned(
      app.db,
      { issuerId: other.id, chgId: await createGroup(other), merchantId, at: times[0] },
      999,
    );
    from = new Date(start.getTime() - 60_000);
    to = new Date(Date.now() + 60_000);
  });
  after(async () => {
    await assertLedgerHealthy(app.db, issuer.id);
    await assertLedgerHealthy(app.db, other.id);
    await app.close();
  });

  it('reconciles with the summaries and the activity of the same period: per type totals and count', async () => {
    const res = await issuer.call('GET', exportPath(from, to));
    assert.equal(res.status, 200, res.text);
    const { rows, checksum } = parseNdjson(res.text);
    const summaries = await Promise.all(
      groups.map(async (g) => (await issuer.call('GET', `/api/v2/chg/${g}/rewards/summary`)).body),
    );
    const sum = (pick: (s: any) => number) => summaries.reduce((total, s) => total + pick(s), 0);
    assert.deepEqual(perType(checksum), {
      cashback_earned: sum((s) => s.cashback.earnedMinor),
      cashback_clawed_back: sum((s) => s.cashback.clawedBackMinor),
      branded_earned: sum((s) => s.brandedBalance.earnedMinor),
      branded_spent: sum((s) => s.brandedBalance.spentMinor),
      branded_expired: sum((s) => s.brandedBalance.expiredMinor),
    });
    assert.equal(
      sum((s) => s.brandedBalance.clawedBackMinor),
      0,
    );
    assert.deepEqual(perType(checksum), {
      cashback_earned: 200,
      cashback_clawed_back: 50,
      branded_earned: 760,
      branded_spent: 300,
      branded_expired: 60,
    });
    const activity = (
      await Promise.all(groups.map((g) => walkPages(issuer, `/api/v2/chg/${g}/rewards/activity`, 50)))
    ).flat();
    assert.equal(checksum.count, activity.length);
    assert.deepEqual(rows.map((r) => r.id).sort(), activity.map((a) => a.id).sort());
    // Ordered by postedAt then id, each naming its transfer and group.
    const keys = rows.map((r) => `${r.postedAt} ${r.id}`);
    assert.deepEqual(keys, [...keys].sort());
    for (const r of rows) {
      assert.ok(groups.includes(r.chgId));
      assert.match(r.transferId, /^[0-9a-f-]{36}$/);
    }
    assert.equal(checksum.from, from.toISOString());
    assert.equal(checksum.to, to.toISOString());
  });

  it('names every transfer that ledger-entries and the trial balance hold for those events', async () => {
    const { rows } = parseNdjson((await issuer.call('GET', exportPath(from, to))).text);
    const transfers = await app.db.ledgerTransfer.findMany({ where: { issuerId: issuer.id } });
    assert.deepEqual(rows.map((r) => r.transferId).sort(), transfers.map((t) => t.id).sort());
    for (const r of rows) {
      const transfer = transfers.find((t) => t.id === r.transferId)!;
      assert.equal(transfer.rewardEventId, r.id);
      assert.equal(Number(transfer.amountMinor), r.amountMinor);
    }
  });

  it('takes the period as [from, to): an event at from is in, an event at to is out', async () => {
    const res = await issuer.call('GET', exportPath(times[1], times[3]));
    const { rows, checksum } = parseNdjson(res.text);
    assert.deepEqual(
      rows.map((r) => [r.type, r.postedAt]),
      [
        ['branded_earned', times[1].toISOString()],
        ['branded_spent', times[2].toISOString()],
      ],
    );
    assert.equal(checksum.count, 2);
  });

  it('sends CSV with a header, the same rows and a checksum line that verifies', async () => {
    const res = await issuer.call('GET', exportPath(from, to, 'csv'));
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8; header=present');
    assert.match(
      res.headers.get('content-disposition') ?? '',
      /^attachment; filename="reward-events_\d{8}T\d{6}(\d{3})?Z_\d{8}T\d{6}(\d{3})?Z\.csv"$/,
    );
    const lines = res.text.split('\r\n');
    assert.equal(lines.pop(), '', 'CRLF after the last line');
    const trailer = lines.pop()!;
    assert.equal(lines[0], CSV_COLUMNS.join(','));
    const fields = Object.fromEntries(
      trailer
        .replace(/^#checksum /, '')
        .split(' ')
        .map((kv) => kv.split('=') as [string, string]),
    );
    assert.equal(
      createHash('sha256')
        .update(lines.map((l) => `${l}\r\n`).join(''))
        .digest('hex'),
      fields.sha256,
    );
    const json = parseNdjson((await issuer.call('GET', exportPath(from, to))).text);
    assert.equal(Number(fields.count), json.checksum.count);
    assert.equal(
      fields.totals,
      json.checksum.totals.map((t: any) => `${t.type}:${t.currency}:${t.count}:${t.amountMinor}`).join(';'),
    );
    assert.ok(!trailer.includes(',') && !trailer.includes('"'), 'the trailer is one CSV field');
    const rows = lines.slice(1).map((l) => Object.fromEntries(l.split(',').map((v, i) => [CSV_COLUMNS[i], v])));
    assert.deepEqual(
      rows.map((r) => [r.id, r.type, Number(r.amountMinor), r.transferId]),
      json.rows.map((r) => [r.id, r.type, r.amountMinor, r.transferId]),
    );
    assert.equal(rows[0].transactionId, '', 'null is an empty field');
  });

  it('labels NDJSON as such and as an attachment that is never cached', async () => {
    const res = await issuer.call('GET', exportPath(from, to, 'ndjson'));
    assert.equal(res.headers.get('content-type'), 'application/x-ndjson; charset=utf-8');
    assert.match(res.headers.get('content-disposition') ?? '', /filename="reward-events_.*\.ndjson"/);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.ok(res.headers.get('x-request-id'));
  });

  it("shows each issuer its own events only: another issuer's period holds just its own", async () => {
    const mine = parseNdjson((await issuer.call('GET', exportPath(from, to))).text);
    const theirs = parseNdjson((await other.call('GET', exportPath(from, to))).text);
    assert.deepEqual(
      theirs.rows.map((r) => r.amountMinor),
      [999],
    );
    assert.ok(!mine.rows.some((r) => r.amountMinor === 999));
    const fresh = await newIssuer(app);
    const empty = parseNdjson((await fresh.call('GET', exportPath(from, to))).text);
    assert.deepEqual([empty.rows, empty.checksum.count, empty.checksum.totals], [[], 0, []]);
  });

  it('refuses bad queries with 400 invalid_query naming the field, and callers without a token with 401', async () => {
    const cases: Array<[string, string]> = [
      [`/api/v2/reward-events/export?to=${to.toISOString()}`, '/from'],
      [exportPath(to, to), '/to'],
      [exportPath(to, from), '/to'],
      [exportPath(from, new Date(from.getTime() + 367 * DAY_MS)), '/to'],
      [exportPath(from, to, 'xml'), '/format'],
      [`/api/v2/reward-events/export?from=2026-02-30T00:00:00Z&to=${to.toISOString()}`, '/from'],
      [`${exportPath(from, to)}&chgId=x`, '/chgId'],
    ];
    for (const [path, field] of cases) {
      const res = await issuer.call('GET', path);
      assertError(res, 400, 'invalid_query');
      assert.ok(
        res.body.details.errors.some((e: any) => e.path === field),
        `${path}: ${res.text}`,
      );
    }
    assertError(await app.request('GET', exportPath(from, to)), 401, 'missing_token');
  });
});

describe('the reward-events export of 10,000 events', () => {
  let app: TestApp;
  let issuer: TestIssuer;
  let total: number;
  const start = new Date(Date.now() - 3_600_000);
  const from = new Date(start.getTime() - 60_000);
  const to = new Date(start.getTime() + 3_600_000);
  const COUNT = 10_000;

  before(async () => {
    app = await startTestApp();
    issuer = await newIssuer(app);
    // One more event (the fixture's first, made the ordinary way) than COUNT.
    total = await bulkCashbackEarned(
      app.db,
      { issuerId: issuer.id, chgId: newChgId(), merchantId: newMerchantId() },
      COUNT,
      start,
      10,
    );
  });
  after(async () => {
    await assertLedgerHealthy(app.db, issuer.id);
    await app.close();
  });

  it('streams them over HTTP in many chunks, every event once, and the checksum reconciles', async () => {
    const url = new URL(`/api/v2/reward-events/export?from=${from.toISOString()}&to=${to.toISOString()}`, app.url);
    let chunks = 0;
    const text = await new Promise<string>((resolve, reject) => {
      http
        .get(url, { headers: { authorization: `Bearer ${issuer.token}` } }, (res) => {
          assert.equal(res.statusCode, 200);
          assert.equal(res.headers['transfer-encoding'], 'chunked', 'streamed, no Content-Length');
          const parts: Buffer[] = [];
          res.on('data', (part: Buffer) => {
            chunks += 1;
            parts.push(part);
          });
          res.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
          res.on('error', reject);
        })
        .on('error', reject);
    });
    const { rows, checksum } = parseNdjson(text);
    assert.equal(rows.length, COUNT + 1);
    assert.equal(new Set(rows.map((r) => r.id)).size, COUNT + 1);
    assert.deepEqual(checksum.totals, [
      { type: 'cashback_earned', currency: 'usd', count: COUNT + 1, amountMinor: total },
    ]);
    assert.ok(chunks >= 10, `${chunks} chunks`);
  });

  it('reads pages of bounded size only as the reader takes them, with a bounded buffer and flat memory', async () => {
    const pageSize = 500;
    const pages: number[] = [];
    const heapBefore = process.memoryUsage().heapUsed;
    let heapPeak = heapBefore;
    const stream = await openRewardEventExport(app.db, {
      issuerId: issuer.id,
      from,
      to,
      format: 'ndjson',
      pageSize,
      onPage: (n) => pages.push(n),
    });
    await new Promise((resolve) => stream.once('readable', resolve));
    const first = stream.read() as Buffer;
    assert.ok(first.length > 0);
    // The reader stops: the stream fills its buffer (one page past the high-water mark at most)
    // and stops reading pages. Not a timing assertion: a stream that ignored the reader would
    // read on to the end, and the wait ends as soon as it reads a 4th page.
    for (let waited = 0; waited < 1500 && pages.length <= 3; waited += 50)
      await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(pages.length <= 3, `read ${pages.length} pages while the reader waited`);
    const largestPageBytes = pageSize * 400;
    assert.ok(
      stream.readableLength <= EXPORT_HIGH_WATER_MARK + largestPageBytes,
      `${stream.readableLength} bytes buffered`,
    );
    let bytes = first.length;
    let lines = first.toString('utf8').split('\n').length - 1;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      lines += chunk.toString('utf8').split('\n').length - 1;
      heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
      assert.ok(stream.readableLength <= EXPORT_HIGH_WATER_MARK + largestPageBytes);
    }
    assert.equal(lines, COUNT + 2, 'every event and the checksum line');
    assert.deepEqual(pages.length, Math.ceil((COUNT + 1) / pageSize));
    assert.ok(pages.every((n) => n <= pageSize));
    // Generous: the whole export is about 4 MB of text, and held at once it would be several times that as objects.
    assert.ok(
      heapPeak - heapBefore < 64 * 1024 * 1024,
      `heap grew ${heapPeak - heapBefore} bytes for ${bytes} bytes exported`,
    );
  });

  it('gives its connection back when the reader goes away, whether or not it started reading', async () => {
    // A pool of one connection: the next query only runs if the export gave it back.
    const db = createDb(testDatabaseUrl(), 1);
    try {
      const started = await openRewardEventExport(db, { issuerId: issuer.id, from, to, format: 'csv', pageSize: 100 });
      await new Promise((resolve) => started.once('readable', resolve));
      started.read();
      started.destroy();
      const neverRead = await openRewardEventExport(db, {
        issuerId: issuer.id,
        from,
        to,
        format: 'csv',
        pageSize: 100,
      });
      neverRead.destroy();
      await new Promise((resolve) => setTimeout(resolve, 50));
      const [{ ok }] = await db.$queryRaw<{ ok: number }[]>`SELECT 1 AS ok`;
      assert.equal(ok, 1);
    } finally {
      await db.$disconnect();
    }
  });
});
