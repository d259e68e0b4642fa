import { type SQL, sql } from "drizzle-orm";
import type postgres from "postgres";
import { isDatabaseUnavailable } from "./pg-errors.ts";

/**
 * A statement sent below Drizzle: its text with `$n` placeholders and their values. Written to
 * the connection at once, so its place in the transaction is where it was sent.
 */
export interface RawStatement {
  text: string;
  params: unknown[];
}

/**
 * What a pipelined transaction sends around the caller's own statements (decision 035):
 * `head` goes out with BEGIN, before anything the work sends, and `tail` with COMMIT, after the
 * work's last statement. Neither waits for an answer before the next statement is written, so
 * BEGIN, the tenant, and the work's first statement share one write and one round trip, and so
 * do the audit insert and COMMIT.
 */
export interface TransactionPlan<T = unknown> {
  head: readonly RawStatement[];
  tail?: (result: T) => readonly RawStatement[];
}

/**
 * Handed from `pipelined()` to the `begin` below, synchronously: Drizzle's `db.transaction`
 * calls its client's `begin` before it returns (drizzle-orm/postgres-js/session.js), and
 * `begin` takes the plan before its first `await`. `pipelined()` checks that it was taken.
 */
let handoff: TransactionPlan | undefined;

const ignore = () => {};

/**
 * Runs `transaction` (Drizzle's `db.transaction(work)`) with `plan` sent around the work. If
 * Drizzle ever stopped reaching `begin` synchronously, the tenant would not be sent first: that
 * is refused here, before any statement of the work can run.
 */
export function pipelined<T>(plan: TransactionPlan<T>, transaction: () => Promise<T>): Promise<T> {
  handoff = plan as TransactionPlan;
  let running: Promise<T>;
  let taken: boolean;
  try {
    running = transaction();
  } finally {
    taken = handoff !== (plan as TransactionPlan);
    handoff = undefined;
  }
  if (!taken) {
    running.catch(ignore);
    throw new Error("the pipelined transaction's plan was not taken by begin");
  }
  return running;
}

/**
 * `sql.begin(work)` for Drizzle, on a reserved connection: BEGIN and the plan's head are written
 * without waiting, then the work runs, then the plan's tail and COMMIT are written together.
 * postgres.js writes everything sent in one turn of the event loop as one socket write, and
 * PostgreSQL answers in order, so the work's first statement always runs after the tenant is set.
 * Savepoints (Drizzle's nested `tx.transaction`) are supported; a nested `begin` is not.
 */
export async function beginPipelined(
  sql: postgres.Sql,
  prepare: boolean,
  work: (client: postgres.Sql) => unknown,
): Promise<unknown> {
  const plan = handoff ?? { head: [] };
  handoff = undefined;
  const connection = await sql.reserve();
  /**
   * A postgres.js query is sent when it is first awaited or given a handler, not when it is
   * made: each is given one here, in the order it must run. Every rejection is read below;
   * none may surface as an unhandled one (decision 022).
   */
  const send = (text: string, params: readonly unknown[] = []) => {
    const query = connection.unsafe(text, params as never, {
      prepare: prepare && params.length > 0,
    });
    query.catch(ignore);
    return query;
  };
  const statement = (s: RawStatement) => send(s.text, s.params);
  let usable = true;
  try {
    const head = [send("begin"), ...plan.head.map(statement)];
    let result: unknown;
    try {
      result = await work(scoped(connection, prepare));
    } catch (error) {
      // A head statement that failed is the cause of whatever the work then met.
      const cause = await firstFailure(head, error);
      await send("rollback").catch(ignore);
      throw cause;
    }
    const tail = (plan.tail?.(result) ?? []).map(statement);
    const commit = send("commit");
    const failure = await firstFailure([...head, ...tail], undefined);
    const committed = await commit;
    // PostgreSQL answers COMMIT of a failed transaction with ROLLBACK, not an error.
    if (failure !== undefined) throw failure;
    if (committed.command !== "COMMIT") throw new Error("the transaction was rolled back");
    return result;
  } catch (error) {
    // A connection that went away is already back in postgres.js's closed queue: releasing it
    // would hand a dead connection to the next query.
    if (isDatabaseUnavailable(error)) usable = false;
    throw error;
  } finally {
    if (usable) connection.release();
  }
}

/** The first of these queries to fail, in the order they were sent, else `otherwise`. */
async function firstFailure(queries: readonly Promise<unknown>[], otherwise: unknown) {
  for (const query of queries) {
    const failed = await query.then(
      () => undefined,
      (error: unknown) => ({ error }),
    );
    if (failed) return failed.error;
  }
  return otherwise;
}

/** The reserved connection as Drizzle's transaction sees it: prepared statements, savepoints. */
function scoped(connection: postgres.ReservedSql, prepare: boolean): postgres.Sql {
  let savepoints = 0;
  const self: postgres.Sql = new Proxy(connection, {
    get: (target, property, receiver) => {
      if (property === "unsafe") {
        return (query: string, args?: unknown[], options?: Record<string, unknown>) =>
          target.unsafe(query, args as never, { ...options, prepare });
      }
      if (property === "savepoint") return savepoint;
      if (property === "begin" || property === "release") return undefined;
      return Reflect.get(target, property, receiver);
    },
  });
  async function savepoint(...args: unknown[]): Promise<unknown> {
    const work = args.pop() as (client: postgres.Sql) => unknown;
    const name = `north_s${savepoints++}`;
    await connection.unsafe(`savepoint ${name}`);
    try {
      const result = await work(self);
      await connection.unsafe(`release savepoint ${name}`);
      return result;
    } catch (error) {
      await connection.unsafe(`rollback to savepoint ${name}`);
      throw error;
    }
  }
  return self;
}

/** The same statement for Drizzle's `tx.execute`: its placeholders `$1`…`$n`, each once, in order. */
export function asDrizzleSql(statement: RawStatement): SQL {
  const [first = "", ...rest] = statement.text.split(/\$\d+/);
  const query = sql.raw(first);
  rest.forEach((chunk, i) => {
    query.append(sql`${statement.params[i]}`);
    query.append(sql.raw(chunk));
  });
  return query;
}
