// The worker's /metrics: our counters (postings, webhook attempts, activity failures)
// followed by Temporal's own worker metrics (workflow task failures, schedule-to-start
// latency, ...), which the SDK's runtime exports on an internal port we read through.
import { createServer, type Server } from 'node:http';
import { registry } from '../core/metrics';

export function startWorkerMetricsServer(port: number, temporalMetricsUrl?: string): Server {
  const server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    void (async () => {
      let text = await registry.metrics();
      if (temporalMetricsUrl) {
        // Bounded: a slow exporter must not hold a scrape for long.
        const temporal = await fetch(temporalMetricsUrl, { signal: AbortSignal.timeout(2000) })
          .then((r) => r.text())
          .catch(() => '');
        text += `\n${temporal}`;
      }
      res.writeHead(200, { 'content-type': registry.contentType }).end(text);
    })().catch(() => res.writeHead(500).end());
  });
  server.listen(port);
  return server;
}
