// Temporal connection options from configuration: the dev server locally; a cluster or
// Temporal Cloud in production, with TLS, mTLS client certificates and/or an API key, as
// @temporalio/envconfig maps Temporal's standard settings (core/temporal-config.ts).
import { Connection } from '@temporalio/client';
import { toClientOptions } from '@temporalio/envconfig';
import { NativeConnection, type NativeConnectionOptions } from '@temporalio/worker';
import type { Config } from './config';

/** The address may differ from the profile's (the admin CLI falls back to the dev server's). */
export type TemporalConfig = Pick<Config, 'temporal'> & { temporalAddress: string };

/** Certificates and keys are read here, at connect time, so a restart picks up rotated files. */
export function temporalConnectionOptions(config: TemporalConfig): NativeConnectionOptions {
  return toClientOptions({ ...config.temporal.profile, address: config.temporalAddress }).connectionOptions;
}

export function connectTemporal(config: TemporalConfig): Promise<Connection> {
  return Connection.connect(temporalConnectionOptions(config));
}

export function connectWorker(config: TemporalConfig): Promise<NativeConnection> {
  return NativeConnection.connect(temporalConnectionOptions(config));
}
