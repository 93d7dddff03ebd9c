// Maps low-level failures (pg, Prisma driver adapter, Temporal gRPC) to the few kinds the
// service reacts to. Kept in one function so every caller classifies the same way.

export type FailureKind =
  'database_unavailable' | 'statement_timeout' | 'workflow_engine_unavailable' | 'unique_violation';

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE']);
// PostgreSQL SQLSTATEs of a server that is starting, stopping or out of connections.
const PG_UNAVAILABLE = new Set(['57P01', '57P02', '57P03', '53300', '08000', '08001', '08003', '08006']);
// What the drivers say when they could not get an answer in time: the pool found no connection
// within its bound (pg-pool), Prisma could not start a transaction or its transaction expired
// while statements waited (P2028), a connection stayed silent (prisma/bounded-client.ts).
const DATABASE_UNAVAILABLE_TEXT = new RegExp(
  [
    'DatabaseNotReachable',
    'DatabaseNotAnswering',
    'Connection terminated',
    'connect ECONNREFUSED',
    'timeout exceeded when trying to connect',
    'Unable to start a transaction in the given time',
    'cannot be executed on an expired transaction',
    'P1001',
    'P1017',
  ].join('|'),
);

export function classifyFailure(err: unknown): FailureKind | undefined {
  for (const e of causeChain(err)) {
    const code = typeof e.code === 'string' ? e.code : undefined;
    const name = typeof e.name === 'string' ? e.name : '';
    const message = typeof e.message === 'string' ? e.message : '';
    if (code === '23505' || code === 'P2002') return 'unique_violation';
    // query_canceled: PostgreSQL ended a statement at statement_timeout (prisma/bounded-client.ts).
    if (code === '57014') return 'statement_timeout';
    if (name === 'ServiceError' || name === 'GrpcError' || /TransportError|14 UNAVAILABLE/.test(message)) {
      return 'workflow_engine_unavailable';
    }
    if (
      (code && (NETWORK_CODES.has(code) || PG_UNAVAILABLE.has(code))) ||
      DATABASE_UNAVAILABLE_TEXT.test(message + name + (code ?? ''))
    ) {
      return 'database_unavailable';
    }
  }
  return undefined;
}

interface ErrorLike {
  code?: unknown;
  name?: unknown;
  message?: unknown;
  cause?: unknown;
}

function* causeChain(err: unknown): Generator<ErrorLike> {
  let current: unknown = err;
  // Bounded: cause chains are short, and a cycle must not hang a request.
  for (let depth = 0; depth < 8 && current && typeof current === 'object'; depth++) {
    yield current as ErrorLike;
    const e = current as ErrorLike & { meta?: { driverAdapterError?: unknown } };
    // Prisma reports a driver failure it has no code of its own for (a connection the server
    // ended: P2039) with the pg error under meta.driverAdapterError.cause.
    current = e.cause ?? e.meta?.driverAdapterError;
  }
}
