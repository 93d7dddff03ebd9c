// `npm run e2e-latency` (opt-in): ingestion-to-webhook latency against a stack that is already
// running, `npm start`'s by default: settled purchases at a steady rate from a fresh issuer of its
// own, each timed from the start of its POST to its qualified_settlement webhook at a local
// receiver, and split into stages from its rows (bench/e2e-stages.ts). The bench measures the
// same on a throw-away stack of its own; this measures the configuration a developer runs.
//
//   npm run e2e-latency                             10 a second for 30 s against localhost:3000
//   E2E_RATE=5 E2E_SECONDS=60 npm run e2e-latency   another rate or length
// It reads OPERATOR_TOKEN (default: the one npm start keeps in .data/operator-token), DATABASE_URL
// (default: npm start's embedded database) and API_URL (default http://127.0.0.1:$PORT). The
// webhook receiver listens on 127.0.0.1, which `npm start` allows.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../core/config';
import { buildFixture } from '../bench/fixtures';
import { startReceiver } from '../bench/receiver';
import { runEndToEnd } from '../bench/end-to-end';
import { describeStages } from '../bench/e2e-stages';

async function main(): Promise<void> {
  const config = loadConfig();
  const apiUrl = process.env.API_URL ?? `http://127.0.0.1:${config.port}`;
  const databaseUrl = config.databaseUrl ?? `postgresql://postgres:postgres@127.0.0.1:${config.embeddedPgPort}/rewards`;
  const tokenFile = join(config.dataDir, 'operator-token');
  const operatorToken =
    config.operatorToken ?? (existsSync(tokenFile) ? readFileSync(tokenFile, 'utf8').trim() : undefined);
  if (!operatorToken) throw new Error(`OPERATOR_TOKEN is required (npm start keeps one in ${tokenFile})`);
  const rate = Number(process.env.E2E_RATE ?? 10);
  const seconds = Number(process.env.E2E_SECONDS ?? 30);
  const receiver = await startReceiver();
  try {
    const fixture = await buildFixture({ apiUrl, operatorToken, groups: 20, webhookUrl: receiver.url });
    const runId = Date.now().toString(36);
    // A warm-up: the first purchases of a fresh issuer pay for its caches.
    await runEndToEnd({ apiUrl, fixture, receiver, seconds: 3, rate, runId: `${runId}-warm`, drainTimeoutMs: 60_000 });
    const result = await runEndToEnd({
      apiUrl,
      fixture,
      receiver,
      seconds,
      rate,
      runId,
      drainTimeoutMs: 120_000,
      databaseUrl,
    });
    console.log(
      `end to end at ${rate}/s for ${seconds} s: p50 ${Math.round(result.p50Ms)} ms, p99 ${Math.round(result.p99Ms)} ms, max ${Math.round(result.maxMs)} ms; ${result.received}/${result.sent} received, ${result.errors} refused`,
    );
    if (result.stages) console.log(`by stage, p50/p99 ms: ${describeStages(result.stages)}`);
  } finally {
    await receiver.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
