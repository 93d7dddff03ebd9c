// Addresses of the run's PostgreSQL database and Temporal server (set by global-setup.ts).
export function testDatabaseUrl(): string {
  const url = process.env.TEST_RUN_DATABASE_URL;
  if (!url) throw new Error('TEST_RUN_DATABASE_URL is not set: run tests through `npm test`');
  return url;
}

export function testTemporalAddress(): string {
  const address = process.env.TEST_TEMPORAL_ADDRESS;
  if (!address) throw new Error('TEST_TEMPORAL_ADDRESS is not set: run tests through `npm test`');
  return address;
}
