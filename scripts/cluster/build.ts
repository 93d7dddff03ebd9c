// Builds the cluster's Temporal server and sql tool when they are missing (`go install`, pinned
// version, under .tools/temporal-server-<version>/). `npm run cluster` and `npm run test:cluster`
// do this themselves; CI (.ci/run) calls it as a step of its own so that its time shows apart.
import { ensureTemporalBinaries, TEMPORAL_SERVER_VERSION } from './temporal-server';

const started = Date.now();
ensureTemporalBinaries((line) => console.log(`[cluster] ${line}`))
  .then((binaries) => {
    console.log(
      `[cluster] Temporal server ${TEMPORAL_SERVER_VERSION}: ${binaries.server} (ready in ${Math.round((Date.now() - started) / 1000)} s)`,
    );
  })
  .catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
