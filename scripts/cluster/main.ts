// `npm run cluster`: the production-like topology on this machine (docs/operating/runbook.md,
// "Production-like cluster"), kept under DATA_DIR/cluster between runs and up until Ctrl-C. Builds the Temporal
// server on the first run (go install, about 10 minutes), then starts embedded PostgreSQL, the
// server, two API processes and two worker processes, loads the sandbox catalogue, creates a
// sandbox issuer on the first run, and prints the addresses.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadConfig } from '../../core/config';
import { createDb } from '../../prisma/client';
import { importCatalogueFile, SANDBOX_CATALOGUE_FILE } from '../../api/catalogue/import';
import { ensureOperatorToken, ensureSandboxIssuer } from '../lib/first-run';
import { startCluster } from './cluster';
import { HISTORY_SHARDS, TEMPORAL_SERVER_VERSION } from './temporal-server';

const ROOT = resolve(__dirname, '..', '..');

/** Ports of their own, beside those of `npm start` (3000, 7233, 54329); each can be moved. */
function clusterPorts(env: NodeJS.ProcessEnv) {
  const port = (name: string, fallback: number) => {
    const value = Number(env[name] ?? fallback);
    if (!Number.isInteger(value) || value < 1 || value > 65534)
      throw new Error(`${name} must be a port number (got "${env[name]}")`);
    return value;
  };
  const api = port('CLUSTER_API_PORT', 3101);
  return {
    postgres: port('CLUSTER_PG_PORT', 54339),
    temporal: port('CLUSTER_TEMPORAL_PORT', 7333),
    apis: [api, api + 1],
  };
}

async function main(): Promise<void> {
  const config = loadConfig();
  const dataDir = resolve(ROOT, config.dataDir, 'cluster');
  mkdirSync(dataDir, { recursive: true });
  const operatorToken = ensureOperatorToken(config.operatorToken, dataDir);
  const log = (line: string) => console.log(`[cluster] ${line}`);
  const cluster = await startCluster({
    dataDir,
    persistent: true,
    operatorToken: operatorToken.value,
    ports: clusterPorts(process.env),
    output: 'inherit',
    log,
  });

  const db = createDb(cluster.databaseUrl, 2);
  try {
    await importCatalogueFile(db, SANDBOX_CATALOGUE_FILE, 'sandbox-catalogue', new Date(), { onlyMissing: true });
    await ensureSandboxIssuer(db, (issuer, token) => {
      console.log(
        `\nFirst run: created sandbox issuer ${issuer} with API token (shown once, keep it):\n\n  ${token}\n`,
      );
    });
  } finally {
    await db.$disconnect();
  }

  console.log(`
Temporal   ${cluster.temporalAddress}  (server ${TEMPORAL_SERVER_VERSION}, ${HISTORY_SHARDS} history shards, namespace ${cluster.namespace};
           metrics ${cluster.temporalMetricsUrl}; config ${cluster.temporalConfigFile})
PostgreSQL 127.0.0.1:${cluster.postgresPort}  (databases rewards, temporal, temporal_visibility; data in ${join(dataDir, 'postgres')})
${cluster.apis.map((a) => `API        ${a.url}  (${a.name}, pid ${a.child.pid})`).join('\n')}
${cluster.workers.map((w) => `Worker     ${w.name}, pid ${w.child.pid}, metrics ${w.url}`).join('\n')}
Services   run from ${cluster.runFrom === 'dist' ? 'the compiled build (dist/)' : 'the TypeScript sources (tsx)'}
Operator   token ${operatorToken.source}${operatorToken.printable ? `: ${operatorToken.value}` : ''}
Logs       Temporal server: ${join(dataDir, 'logs', 'temporal-server.log')}
`);

  let stopping = false;
  const shutdown = async (code: number) => {
    if (stopping) return;
    stopping = true;
    log('stopping');
    await cluster.stop();
    process.exit(code);
  };
  // A service process that dies is reported; the others carry on, as the hosts of a cluster do.
  for (const service of [...cluster.apis, ...cluster.workers]) {
    service.child.once('exit', (code, signal) => {
      if (!stopping)
        log(`${service.name} (pid ${service.child.pid}) exited with ${code ?? signal}; the others carry on`);
    });
  }
  process.once('SIGINT', () => void shutdown(0));
  process.once('SIGTERM', () => void shutdown(0));
}

main().catch((err) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});
