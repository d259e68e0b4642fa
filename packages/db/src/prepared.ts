import { is, Param, Placeholder, SQL, sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { drizzle } from "drizzle-orm/postgres-js";
import type postgres from "postgres";
import type { Database, Tx } from "./client.ts";
import { asDrizzleSql, BUILT_ONCE, connectionOf } from "./pipelined-transaction.ts";

/**
 * Statements on a tool call's path, built once (decision 036). Drizzle builds a query's text anew
 * every time it runs it — a tenth of a call's CPU on the profile read — so the statements every
 * call sends are built by Drizzle once, at module load, with named placeholders (one source for
 * the table and column names: the schema), and run on the tenant transaction's connection with
 * their values. Rows come back as PostgreSQL names them (`snake_case`, timestamps as text, as
 * Drizzle's driver sets postgres.js to return them); each statement's `map` reads them.
 */

/** Drizzle without a connection: it only builds texts. */
const builder = drizzle.mock();
/** What a statement's builder is given to build its query with. */
export type StatementBuilder = typeof builder;
const dialect = new PgDialect();

type Slot = { name: string } | { value: unknown };

export interface PreparedStatement<Params extends Record<string, unknown>, Row> {
  /** The text, `$1`…`$n` in the order of `slots`. */
  readonly text: string;
  readonly slots: readonly Slot[];
  readonly map: (row: Record<string, unknown>) => Row;
  /** Only for the types: the params this statement takes. */
  readonly params?: Params;
}

/** Each named placeholder of a statement's params, for the builder. */
type Placeholders<Params> = { [K in keyof Params]: Placeholder<K & string> };

/**
 * Builds `build`'s query once with a placeholder for each of `names`; `map` turns each row as
 * PostgreSQL sends it into the caller's shape.
 */
export function prepareStatement<Params extends Record<string, unknown>, Row>(
  names: readonly (keyof Params & string)[],
  build: (
    db: StatementBuilder,
    p: Placeholders<Params>,
  ) => SQL | { toSQL(): { sql: string; params: unknown[] } },
  map: (row: Record<string, unknown>) => Row,
): PreparedStatement<Params, Row> {
  const placeholders = Object.fromEntries(
    names.map((name) => [name, sql.placeholder(name)]),
  ) as unknown as Placeholders<Params>;
  const built = build(builder, placeholders);
  const query = is(built, SQL) ? dialect.sqlToQuery(built) : built.toSQL();
  const slots = query.params.map((param): Slot => {
    const value = is(param, Param) ? param.value : param;
    return is(value, Placeholder) ? { name: value.name } : { value };
  });
  return { text: query.sql, slots, map };
}

/**
 * On a tenant transaction's connection a statement without parameters goes out prepared too:
 * postgres.js sends one as a simple query unless told otherwise (an option its types leave out),
 * and PostgreSQL parses and plans a simple query on every call. Through Drizzle's `tx.execute`
 * (below), and behind a transaction pooler, where North prepares nothing, it is still parsed and
 * planned each time. The option also tells the transaction the statement was built once, so
 * that as the work's first it may end the batch of BEGIN and the tenant (decision 045).
 */
const EXTENDED = BUILT_ONCE;

/**
 * Runs a prepared statement in `tx`: straight on the connection of a tenant transaction
 * (`withTenant`), or through Drizzle's `tx.execute` in any other transaction.
 */
export async function runStatement<Params extends Record<string, unknown>, Row>(
  tx: Tx,
  statement: PreparedStatement<Params, Row>,
  params: Params,
): Promise<Row[]> {
  const values = statement.slots.map((slot) => ("name" in slot ? params[slot.name] : slot.value));
  const connection = connectionOf(tx);
  const rows = connection
    ? await connection.unsafe(statement.text, values as never, EXTENDED)
    : await tx.execute(asDrizzleSql({ text: statement.text, params: values }));
  return rows.map((row) => statement.map(row as Record<string, unknown>));
}

/**
 * Runs a prepared statement on its own, outside any transaction, on the pool `db` draws from
 * (the token check every request makes before anything else).
 */
export async function runOnPool<Params extends Record<string, unknown>, Row>(
  db: Database,
  statement: PreparedStatement<Params, Row>,
  params: Params,
): Promise<Row[]> {
  const values = statement.slots.map((slot) => ("name" in slot ? params[slot.name] : slot.value));
  const { $client } = db as Database & { $client: postgres.Sql };
  const rows = await $client.unsafe(statement.text, values as never);
  return rows.map((row) => statement.map(row as Record<string, unknown>));
}

/** A `timestamptz` as Drizzle's driver leaves it (text), or as a Date, read as a Date. */
export function timestampOf(value: unknown): Date {
  return value instanceof Date ? value : new Date(String(value));
}
