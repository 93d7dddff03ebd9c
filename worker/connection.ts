// Temporal connection options from configuration: the dev server locally; a cluster or
// Temporal Cloud (TLS, API key) in production.
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Config } from '../core/config';

type TemporalConfig = Pick<Config, 'temporalApiKey' | 'temporalTls'> & { temporalAddress: string };

function options(config: TemporalConfig) {
  return {
    address: config.temporalAddress,
    tls: config.temporalTls ? {} : undefined,
    apiKey: config.temporalApiKey,
  };
}

export function connectTemporal(config: TemporalConfig): Promise<Connection> {
  return Connection.connect(options(config));
}

export function connectWorker(config: TemporalConfig): Promise<NativeConnection> {
  return NativeConnection.connect(options(config));
}
