// Whether this API process is shutting down. api/server.ts starts draining on SIGTERM;
// /readyz then answers 503 at once, so the load balancer stops sending new requests while the
// ones in flight finish (api/shutdown.ts has the whole order).
export interface Draining {
  readonly active: boolean;
  start(): void;
}

export function createDraining(): Draining {
  let active = false;
  return {
    get active() {
      return active;
    },
    start() {
      active = true;
    },
  };
}
