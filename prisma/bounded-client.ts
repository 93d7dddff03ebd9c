// The pg client every connection of ours is opened with (the pools under Prisma, the LISTEN
// connections): each wait on the database server has a bound, so a host that stops answering,
// rather than refusing, fails the work on it within seconds instead of holding it for as long as
// TCP keeps retrying (many minutes). The bounds:
//   - opening a connection (TCP, TLS, start-up, authentication): connectTimeoutMs, which a pool
//     also puts on waiting for a free connection (prisma/client.ts);
//   - a statement: PostgreSQL's own statement_timeout ends it at statementTimeoutMs and answers
//     with an error; a connection that has said nothing at all ANSWER_MARGIN_MS after that is
//     taken for dead and dropped (its statements fail with DatabaseNotAnswering, which
//     core/failures.ts classifies as database_unavailable, and the pool opens a new one when
//     asked), the same recovery as for a connection the server ended;
//   - a transaction left idle by a client that vanished: idle_in_transaction_session_timeout,
//     so the server ends it and frees its locks even when it never hears from that client again.
// The two server settings are SET once per new pooled connection (sessionBounds), not sent as
// start-up parameters, which a pooler such as PgBouncer refuses unless told to ignore them.
import pg from 'pg';

export interface DatabaseTimeouts {
  /** Opening a connection, from the TCP connect to the first ready-for-query; in a pool, waiting for a free one too. */
  connectTimeoutMs: number;
  /** PostgreSQL's statement_timeout; the client waits ANSWER_MARGIN_MS more before it drops a silent connection. */
  statementTimeoutMs: number;
  /** A transaction's bound: Prisma's interactive transaction time-out, and idle_in_transaction_session_timeout. */
  transactionTimeoutMs: number;
}

/** What the scripts and tests get; the API and the worker pass their configuration (core/config.ts). */
export const DEFAULT_DATABASE_TIMEOUTS: DatabaseTimeouts = {
  connectTimeoutMs: 5_000,
  statementTimeoutMs: 20_000,
  transactionTimeoutMs: 20_000,
};

/**
 * How long past the statement time-out a busy connection may stay silent. A server that is up
 * answers a statement it cancelled at once; the margin covers the network and a busy event loop.
 */
export const ANSWER_MARGIN_MS = 1_000;

/** A busy connection heard nothing from the server within its bound; it is dropped. */
export class DatabaseNotAnswering extends Error {
  override readonly name = 'DatabaseNotAnswering';
  /** SQLSTATE connection_failure: core/failures.ts reads it as database_unavailable. */
  readonly code = '08006';

  constructor(silentMs: number) {
    super(`The database did not answer for ${silentMs} ms; the connection was dropped.`);
  }
}

/** The server's side of the bounds, for a new session (one round trip, two statements). */
export function sessionBounds(timeouts: DatabaseTimeouts): string {
  const ms = (value: number) => {
    if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`not a positive integer of ms: ${value}`);
    return value;
  };
  return (
    `SET statement_timeout = ${ms(timeouts.statementTimeoutMs)}; ` +
    `SET idle_in_transaction_session_timeout = ${ms(timeouts.transactionTimeoutMs)}`
  );
}

/**
 * The session bounds as pg-pool's onConnect hook: the pool waits for the promise it returns before
 * it hands the new connection out (pg's typings declare the hook's result void).
 */
export function boundSession(timeouts: DatabaseTimeouts): NonNullable<pg.PoolConfig['onConnect']> {
  const sql = sessionBounds(timeouts);
  return ((client: pg.ClientBase) => client.query(sql)) as NonNullable<pg.PoolConfig['onConnect']>;
}

type Query = (this: pg.Client, ...args: unknown[]) => unknown;

/** A pg Client class bound by `timeouts`, for pg.Pool's `Client` option or on its own. */
export function boundedClient(timeouts: DatabaseTimeouts): typeof pg.Client {
  const silenceLimitMs = timeouts.statementTimeoutMs + ANSWER_MARGIN_MS;
  class BoundedClient extends pg.Client {
    private answerWatch: NodeJS.Timeout | undefined;
    private lastAnswerMs = 0;

    constructor(config?: string | pg.ClientConfig) {
      const given: pg.ClientConfig = typeof config === 'string' ? { connectionString: config } : { ...config };
      super({ ...given, connectionTimeoutMillis: timeouts.connectTimeoutMs });
      // Every message from the server counts as an answer: a long result streaming in is alive.
      this.connection.on('message', () => (this.lastAnswerMs = performance.now()));
      // Nothing left to run: silence is normal from here on.
      this.on('drain', () => this.stopWatching());
      this.on('end', () => this.stopWatching());
    }

    /** A statement was queued: from now on the server owes an answer. */
    expectAnswer(): void {
      if (this.answerWatch) return;
      this.lastAnswerMs = performance.now();
      this.watchAnswers(silenceLimitMs);
    }

    private watchAnswers(delayMs: number): void {
      this.answerWatch = setTimeout(() => {
        const silentMs = performance.now() - this.lastAnswerMs;
        if (silentMs < silenceLimitMs) return this.watchAnswers(silenceLimitMs - silentMs);
        this.answerWatch = undefined;
        // The stream's error fails every statement of this client with it; pg marks the client
        // not queryable, so the pool drops it rather than hand it out again.
        this.connection.stream.destroy(new DatabaseNotAnswering(Math.round(silentMs)));
      }, delayMs);
      this.answerWatch.unref();
    }

    private stopWatching(): void {
      clearTimeout(this.answerWatch);
      this.answerWatch = undefined;
    }
  }
  // pg's query() has a dozen overloads; this wraps them all. It looks pg's method up at each call,
  // so the SQL spans' wrapper of it (core/sql-spans.ts) applies whenever it is installed.
  Object.defineProperty(BoundedClient.prototype, 'query', {
    configurable: true,
    writable: true,
    value: function boundedQuery(this: BoundedClient, ...args: unknown[]): unknown {
      const result = (pg.Client.prototype.query as Query).apply(this, args);
      this.expectAnswer();
      return result;
    },
  });
  return BoundedClient;
}
