import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { beginPipelined } from "./pipelined-transaction.ts";
/**
 * The app's Drizzle handle. Built without a schema: North writes its queries with the query
 * builder and never reads through Drizzle's relational API (`db.query.*`), whose builders Drizzle
 * would otherwise construct for every table at the start of every transaction.
 */
export type Database = PostgresJsDatabase;

/** A transaction handle as Drizzle passes it to `db.transaction` callbacks. */
export type Tx = Parameters<Parameters<Database["transaction"]>[0]>[0];

export interface ConnectOptions {
  /** Pool size. The app login pool is shared by every request of a replica. */
  max?: number;
  /** Shown in `pg_stat_activity`, so an operator can tell North's connections apart. */
  applicationName?: string;
  /**
   * PostgreSQL `statement_timeout` for every statement on this pool, in milliseconds: one
   * caller's expensive query cannot hold a pooled connection longer than this. Unset: none.
   */
  statementTimeoutMs?: number;
  /**
   * Milliseconds to wait for a new connection before failing (postgres.js `connect_timeout`):
   * with the statement timeout, the bound on how long a call can wait on an unreachable server.
   */
  connectTimeoutMs?: number;
  /**
   * Seconds `close()` lets queries in flight finish before it terminates the connections
   * (postgres.js `end({ timeout })`); `close()` itself returns at most a second later.
   */
  closeTimeoutS?: number;
  /**
   * The URL leads to a transaction pooler (PgBouncer with `pool_mode = transaction`), which
   * hands each transaction to any server connection: no named prepared statements, and the
   * timeouts go with each tenant transaction (`set_config(…, true)`) instead of the connection's
   * startup parameters, which such a pooler refuses. `NORTH_DB_POOLER=transaction`.
   */
  transactionPooler?: boolean;
}

export interface DatabaseHandle {
  db: Database;
  /** The underlying postgres.js client, for the few statements Drizzle cannot express. */
  client: postgres.Sql;
  close(): Promise<void>;
}

/**
 * Longest pause, in seconds, before a connection that failed is tried again. postgres.js grows
 * the pause to 20 s after a few failures; while PostgreSQL is down that turns "fail fast" into
 * a queue, and once it is back the pool would stay away for as long. Half a second keeps both
 * short while still spacing the attempts of a whole pool (jittered, doubling from 50 ms).
 */
const MAX_RECONNECT_PAUSE_S = 0.5;

function reconnectPause(retries: number): number {
  return (0.5 + Math.random() / 2) * Math.min(0.05 * 2 ** retries, MAX_RECONNECT_PAUSE_S);
}

/**
 * Opens a pooled connection. NOTICE messages are dropped: they would only add noise to logs.
 * The pool recovers from a PostgreSQL restart by itself: a closed connection is opened again by
 * the next query that needs it (under Bun this needs patches/postgres@3.4.9.patch, decision 022).
 */
export function connectDatabase(url: string, options: ConnectOptions = {}): DatabaseHandle {
  const closeTimeoutS = options.closeTimeoutS ?? 5;
  const timeouts = options.statementTimeoutMs
    ? {
        statement_timeout: options.statementTimeoutMs,
        idle_in_transaction_session_timeout: options.statementTimeoutMs,
      }
    : {};
  const client = postgres(url, {
    max: options.max ?? 10,
    onnotice: () => {},
    connect_timeout: (options.connectTimeoutMs ?? 10_000) / 1000,
    backoff: reconnectPause,
    prepare: !options.transactionPooler,
    connection: {
      application_name: options.applicationName ?? "north",
      ...(options.transactionPooler ? {} : timeouts),
    },
  });
  const db = drizzle(preparing(client, !options.transactionPooler));
  if (options.transactionPooler && options.statementTimeoutMs) {
    perTransactionTimeouts.set(db, options.statementTimeoutMs);
  }
  return {
    db,
    client,
    close: () => endWithin(client, closeTimeoutS),
  };
}

/**
 * The client as Drizzle should see it.
 *
 * Every statement Drizzle sends is a named prepared statement, kept per connection by
 * postgres.js (decision 026), unless a transaction pooler is in front (`prepare` false). Drizzle
 * prepares only the queries given a name with `.prepare()`, and postgres.js sends any other
 * statement that has parameters as Parse and Describe, waits for the answer, then binds: two
 * round trips and a fresh parse and plan in PostgreSQL for every statement of every request.
 * Prepared, a statement is parsed once per connection and then costs one round trip. Drizzle's
 * statements are fixed texts with parameters, so the set postgres.js keeps stays as small as the
 * code.
 *
 * Transactions are pipelined (decision 035): BEGIN and what the caller sends first (the tenant)
 * go out with the work's first statement, and the caller's last statement (the audit row) with
 * COMMIT.
 */
function preparing(sql: postgres.Sql, prepare: boolean): postgres.Sql {
  const overrides: Record<string | symbol, unknown> = {
    unsafe: (query: string, args?: unknown[], options?: Record<string, unknown>) =>
      sql.unsafe(query, args as never, { ...options, prepare }),
    begin: (...args: unknown[]) =>
      beginPipelined(sql, prepare, args.at(-1) as (client: postgres.Sql) => unknown),
  };
  return new Proxy(sql, {
    get: (target, property, receiver) =>
      property in overrides ? overrides[property] : Reflect.get(target, property, receiver),
  });
}

/**
 * Pools behind a transaction pooler, and the timeout each of their tenant transactions sets for
 * itself (see `transactionPooler`).
 */
const perTransactionTimeouts = new WeakMap<Database, number>();

/** The `statement_timeout` a tenant transaction on `db` must set itself, if any (ms). */
export function transactionTimeoutMs(db: Database): number | undefined {
  return perTransactionTimeouts.get(db);
}

/**
 * `end({ timeout })`, bounded once more: postgres.js waits for each connection's socket to
 * report `close`, which a half-closed socket (CLOSE-WAIT after a server restart) may never do.
 */
async function endWithin(client: postgres.Sql, timeoutS: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, (timeoutS + 1) * 1000);
    timer.unref?.();
  });
  try {
    await Promise.race([client.end({ timeout: timeoutS }), deadline]);
  } finally {
    clearTimeout(timer);
  }
}
