// The floor of the API's hot paths: a bare node:http server in its own process, on the same
// database through pg with the API's pool size, doing the least a real endpoint must:
//   GET  /floor/read/<id>   one primary-key SELECT of a stored event, answered as JSON;
//   POST /floor/ingest      parse a JSON array of events, insert them with ONE unnest
//                           statement into a table of its own, answer 204.
// No framework, no auth, no validation: what our API does beyond this is its overhead, and
// `npm run bench` prints each hot path as a share of this floor, measured in the same run.
import http from 'node:http';
import pg from 'pg';

const FLOOR_TABLE = 'bench_floor_event';

async function main(): Promise<void> {
  const pool = new pg.Pool({
    connectionString: process.env.DATABASE_URL,
    max: Number(process.env.DATABASE_POOL_SIZE ?? 10),
  });
  await pool.query(`CREATE TABLE IF NOT EXISTS ${FLOOR_TABLE} (
    id text PRIMARY KEY, external_id text NOT NULL, amount_minor bigint NOT NULL, currency text NOT NULL,
    created_at timestamptz NOT NULL, payload jsonb NOT NULL, received_at timestamptz NOT NULL DEFAULT now())`);
  const server = http.createServer((req, res) => {
    const fail = (err: unknown) => {
      res.statusCode = 500;
      res.end(String(err));
    };
    if (req.method === 'GET' && req.url?.startsWith('/floor/read/')) {
      pool
        .query('SELECT id, reward_status, merchant_id, amount_minor::text FROM ingested_event WHERE id = $1', [
          req.url.slice('/floor/read/'.length),
        ])
        .then(({ rows }) => {
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify(rows[0] ?? null));
        }, fail);
      return;
    }
    if (req.method === 'POST' && req.url === '/floor/ingest') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const events = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Array<{
          id: string;
          amount: number;
          currency: string;
          createdAt: string;
        }>;
        pool
          .query(
            `INSERT INTO ${FLOOR_TABLE} (id, external_id, amount_minor, currency, created_at, payload)
             SELECT gen_random_uuid()::text, x.id, x.amount, x.currency, x.created_at, x.payload
               FROM unnest($1::text[], $2::bigint[], $3::text[], $4::timestamptz[], $5::jsonb[]) AS x(id, amount, currency, created_at, payload)`,
            [
              events.map((e) => e.id),
              events.map((e) => e.amount),
              events.map((e) => e.currency),
              events.map((e) => e.createdAt),
              events.map((e) => JSON.stringify(e)),
            ],
          )
          .then(() => {
            res.statusCode = 204;
            res.end();
          }, fail);
      });
      return;
    }
    res.statusCode = 404;
    res.end();
  });
  server.listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.({ ready: true }));
  process.once('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
}

main().catch((err) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});
