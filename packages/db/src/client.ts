import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import * as schema from "./schema/index.ts";

export type Database = PostgresJsDatabase<typeof schema>;

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
  /** Seconds to wait for a new connection before failing (postgres.js `connect_timeout`). */
  connectTimeoutS?: number;
}

export interface DatabaseHandle {
  db: Database;
  /** The underlying postgres.js client, for the few statements Drizzle cannot express. */
  client: postgres.Sql;
  close(): Promise<void>;
}

/** Opens a pooled connection. NOTICE messages are dropped: they would only add noise to logs. */
export function connectDatabase(url: string, options: ConnectOptions = {}): DatabaseHandle {
  const client = postgres(url, {
    max: options.max ?? 10,
    onnotice: () => {},
    connect_timeout: options.connectTimeoutS ?? 10,
    connection: {
      application_name: options.applicationName ?? "north",
      ...(options.statementTimeoutMs
        ? {
            statement_timeout: options.statementTimeoutMs,
            idle_in_transaction_session_timeout: options.statementTimeoutMs,
          }
        : {}),
    },
  });
  return {
    db: drizzle(client, { schema }),
    client,
    close: () => client.end({ timeout: 5 }),
  };
}
