// A pooled connection held across several statements (a raw-SQL transaction, an export's
// snapshot). pg-pool listens for a connection's 'error' only while the connection is idle in
// the pool and removes that listener when it hands the connection out. Should the server end
// the connection while we hold it (a restart, a failover, pg_terminate_backend), the pg Client
// emits 'error', and an 'error' nobody listens to is thrown by Node and ends the whole
// process. So a held connection listens from check-out to release: the loss is recorded, the
// statement in flight (or the next one) fails with DatabaseConnectionLost, which
// core/failures.ts classifies as database_unavailable, and the connection is dropped on release
// instead of going back to the pool.
import type pg from 'pg';

/** The server ended a connection we held; the work on it is lost and may be retried. */
export class DatabaseConnectionLost extends Error {
  override readonly name = 'DatabaseConnectionLost';
  /** SQLSTATE connection_failure: core/failures.ts reads it as database_unavailable. */
  readonly code = '08006';

  constructor(cause: unknown) {
    super('The database connection was lost while in use.', { cause });
  }
}

export class HeldConnection {
  private lostWith: Error | undefined;
  private released = false;
  private readonly onError = (err: Error) => {
    this.lostWith ??= err;
  };

  private constructor(private readonly client: pg.PoolClient) {
    client.on('error', this.onError);
  }

  /** Checks a connection out of the pool, listening for its 'error' at once. */
  static async checkOut(pool: pg.Pool): Promise<HeldConnection> {
    return new HeldConnection(await pool.connect());
  }

  /** True once the server has ended this connection. */
  get lost(): boolean {
    return this.lostWith !== undefined;
  }

  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    query: string | pg.QueryConfig<unknown[]>,
  ): Promise<pg.QueryResult<R>> {
    if (this.lostWith) throw new DatabaseConnectionLost(this.lostWith);
    try {
      return await this.client.query<R>(query);
    } catch (err) {
      // A statement cut by the loss fails with the server's or the socket's own error, or with
      // pg's "not queryable" when the loss came first: all three mean the same to the caller.
      if (this.lostWith) throw new DatabaseConnectionLost(err);
      throw err;
    }
  }

  /**
   * Gives the connection back, or drops it when it is broken (`err`) or lost. Once only; the
   * listener goes after pg-pool has put its own back, so no moment is left without one.
   */
  release(err?: Error): void {
    if (this.released) return;
    this.released = true;
    this.client.release(err ?? this.lostWith);
    this.client.removeListener('error', this.onError);
  }
}
