// `npm run replay -- <workflowId> [--save <file.json>]`: fetches a live workflow history
// and replays it against the current workflow code (and can save it as a fixture).
// `npm run replay -- --dir <folder>`: replays every history in a folder.
// `--workflows <entry.ts>` replays against another workflow entry file (a candidate change).
// Exit code 0 when every replay matches, 1 on a divergence (printed), 2 on bad usage.
import { writeFileSync } from 'node:fs';
import { Client } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { loadConfig } from '../core/config';
import { connectTemporal } from '../core/temporal-connection';
import { loadHistoryDir, replayHistories } from './lib/replay';

async function main(argv: string[]): Promise<number> {
  // The replay worker's state changes are noise here; divergences are printed below.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const flag = (name: string) => (argv.indexOf(name) >= 0 ? argv[argv.indexOf(name) + 1] : undefined);
  // --workflows points at another workflow entry file (a candidate change) to replay against.
  const workflowsPath = flag('--workflows');
  const dir = flag('--dir');
  if (argv.includes('--dir')) {
    if (!dir) return usage();
    return report(await replayHistories(loadHistoryDir(dir), workflowsPath));
  }
  const flagValues = new Set(['--save', '--workflows'].map(flag).filter(Boolean));
  const workflowId = argv.find((a) => !a.startsWith('--') && !flagValues.has(a));
  const save = flag('--save');
  if (!workflowId) return usage();
  const config = loadConfig();
  const connection = await connectTemporal({
    ...config,
    temporalAddress: config.temporalAddress ?? `127.0.0.1:${config.temporalDevPort}`,
  });
  try {
    const client = new Client({ connection, namespace: config.temporalNamespace });
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    if (save) {
      writeFileSync(save, `${historyToJSON(history)}\n`);
      console.error(`saved ${history.events?.length ?? 0} events to ${save}`);
    }
    return report(await replayHistories([{ workflowId, history }], workflowsPath));
  } finally {
    await connection.close();
  }
}

function report(outcomes: Array<{ workflowId: string; ok: boolean; error?: string }>): number {
  for (const o of outcomes)
    console.log(o.ok ? `ok        ${o.workflowId}` : `DIVERGED  ${o.workflowId}\n          ${o.error}`);
  const failed = outcomes.filter((o) => !o.ok).length;
  console.log(`${outcomes.length - failed} replayed, ${failed} diverged`);
  return failed === 0 && outcomes.length > 0 ? 0 : 1;
}

function usage(): number {
  console.error(
    'usage: npm run replay -- <workflowId> [--save <file.json>] [--workflows <entry.ts>]\n       npm run replay -- --dir <folder> [--workflows <entry.ts>]',
  );
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
