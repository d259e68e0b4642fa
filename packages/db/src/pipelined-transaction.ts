import { type SQL, sql } from "drizzle-orm";
import type postgres from "postgres";

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
 * Marks the statement after which a transaction sends nothing more before it awaits an answer:
 * postgres.js then writes it, with whatever was sent before it, at once, where it would
 * otherwise wait for the event loop's immediates — behind every other request that was ready
 * in the same turn (patches/postgres@3.4.9.patch, decision 043). The work's statements sent
 * through `unsafe` (all of Drizzle's and the statements built once), COMMIT, ROLLBACK and
 * savepoints are flushed; BEGIN and the head are not, so they leave in the same write as the
 * work's first statement. A tagged template the work writes itself takes no options and still
 * leaves on postgres.js's timer (no store writes one).
 */
const FLUSH = { flush: true } as postgres.UnsafeQueryOptions;

/**
 * A statement of a transaction sent as one batch (decision 044): written without a Sync, so
 * PostgreSQL runs it and the statements after it, up to the next one sent without `batch`, in one
 * implicit transaction (patches/postgres@3.4.9.patch). Always extended: a simple Query would end
 * the batch.
 */
const BATCH = { batch: true, simple: false } as postgres.UnsafeQueryOptions;
/** The last statement of a batch: it carries the Sync that commits the batch, flushed. */
const BATCH_END = { simple: false, flush: true } as postgres.UnsafeQueryOptions;
/**
 * A statement of a batch inside the transaction's own BEGIN (decision 045): written without a
 * Sync, so the statement sent after it carries the one Sync of both; PostgreSQL runs them in the
 * transaction block, skips the rest up to the Sync when one fails, and leaves the block open
 * (failed, then) for COMMIT or ROLLBACK, which this transaction always sends. BEGIN and the head
 * go so with the work's first statement, the tail so with COMMIT.
 */
const IN_TRANSACTION = {
  batch: true,
  transaction: true,
  simple: false,
} as postgres.UnsafeQueryOptions;

/**
 * The option `runStatement` sends a statement built once with (prepared.ts): its text is fixed,
 * and its values are the ones its author typed, so it may end a batch of BEGIN and the head when
 * it is the work's first statement (decision 045), sent parsed and bound at once on a connection
 * that has not prepared it yet. Drizzle's own queries and tagged templates are not marked: BEGIN
 * and the head go before them with their own Syncs.
 */
export const BUILT_ONCE = { simple: false, builtOnce: true } as postgres.UnsafeQueryOptions;

/**
 * The connection of the transaction whose work is being entered, set only while Drizzle runs
 * synchronously from `begin` to the caller's work (see {@link adoptConnection}).
 */
let opening: postgres.Sql | undefined;
const connections = new WeakMap<object, postgres.Sql>();

/**
 * Called first thing in a pipelined transaction's work with its Drizzle `tx`: remembers the
 * connection below it, so statements built once (prepared.ts) run on it without Drizzle. Had
 * Drizzle stopped reaching the work synchronously, nothing is adopted and they go through
 * Drizzle instead.
 */
export function adoptConnection(tx: object): void {
  if (opening) connections.set(tx, opening);
  opening = undefined;
}

/** The connection below a pipelined transaction's `tx`, if it adopted one. */
export function connectionOf(tx: object): postgres.Sql | undefined {
  return connections.get(tx);
}

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
 * BEGIN and the head wait in the connection's buffer for the work's first statement, which is
 * flushed (`FLUSH`, decision 043) with them in one socket write, and PostgreSQL answers in order,
 * so the work's first statement always runs after the tenant is set.
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
  const session = sameSession();
  /**
   * A postgres.js query is sent when it is first awaited or given a handler, not when it is
   * made: each is given one here, in the order it must run, and written a microtask later, or at
   * once with `now` (`writeNow`). Every rejection is read below; none may surface as an unhandled
   * one (decision 022).
   */
  const send = (text: string, params: readonly unknown[] = [], options = {}, now = false) => {
    if (session.gone()) return refused();
    const query = connection.unsafe(text, params as never, {
      prepare: prepare && params.length > 0,
      ...options,
    });
    if (now) writeNow(query);
    query.catch(ignore);
    return query;
  };
  /**
   * BEGIN and the head, once sent: before the work's first statement, or, when the work's first
   * statement is its last (`finishWith`) or it sends none, as the start of one batch.
   */
  let head: Promise<unknown>[] | undefined;
  /** Whether the transaction went out as one batch; then how many of its statements are left. */
  let batched = false;
  let batchLeft = 0;
  /** The options of a batch's next statement. */
  const nextInBatch = () => (--batchLeft === 0 ? BATCH_END : BATCH);
  /**
   * Writes BEGIN and the head before the work's first statement, at once: ahead of any statement
   * of the work whose send is already pending. When that statement is one built once (`first`,
   * its values, given as it is being sent) whose values a batch carries, BEGIN and the head go
   * without their Syncs and it ends their batch (decision 045): one Sync, one ReadyForQuery, for
   * all three. It is sent right after them, so their batch is never left without its Sync.
   */
  const open = (first?: readonly unknown[]) => {
    if (head) return;
    const batching = first && batchable(first) && plan.head.every(carried) ? IN_TRANSACTION : {};
    const begin = send("begin", [], { ...session.beginOptions, ...batching }, true);
    session.follow(begin);
    head = [begin, ...plan.head.map((s) => send(s.text, s.params, batching, true))];
  };
  /**
   * Opens the transaction as one batch (decision 044) of the head, the work's last statement (with
   * `last`, its values) and the tail — no BEGIN, no COMMIT: PostgreSQL's implicit transaction of a
   * pipeline, committed by the Sync after the batch's last statement, or rolled back whole when a
   * statement fails. Only while nothing is sent, with a head (the tenant) to open it, and with
   * values a batch can carry; otherwise false, and nothing is sent.
   */
  const openBatch = (last: readonly unknown[] | undefined, tail: readonly RawStatement[]) => {
    if (head || plan.head.length === 0) return false;
    if (!plan.head.every(carried) || !tail.every(carried) || (last && !batchable(last))) {
      return false;
    }
    batched = true;
    batchLeft = plan.head.length + (last ? 1 : 0) + tail.length;
    head = plan.head.map((s, i) =>
      send(s.text, s.params, { ...(i === 0 ? session.beginOptions : {}), ...nextInBatch() }),
    );
    session.follow(head[0] as Promise<postgres.RowList<postgres.Row[]>>);
    return true;
  };
  /** The tail and COMMIT, once sent: after the work, or with its last statement (`finishWith`). */
  let ending: { tail: Promise<unknown>[]; commit: Promise<unknown> } | undefined;
  /**
   * `last`: the work's last statement, when `finishWith` sent it. Inside BEGIN, the tail goes as a
   * batch that COMMIT ends (decision 045), continuing the one `last` began if it did.
   */
  const end = (tail: readonly RawStatement[], last?: Promise<unknown>) => {
    if (batched || (head === undefined && openBatch(undefined, tail))) {
      // The batch's last statement stands for COMMIT: it is answered once its Sync committed.
      const sent = tail.map((s) => send(s.text, s.params, nextInBatch()));
      const commit = sent.at(-1) ?? last ?? (head as Promise<unknown>[]).at(-1);
      ending = { tail: sent, commit: commit as Promise<unknown> };
      return;
    }
    open();
    const batching = tail.every(carried) ? IN_TRANSACTION : {};
    ending = {
      tail: tail.map((s) => send(s.text, s.params, batching)),
      commit: send("commit", [], FLUSH),
    };
  };
  /**
   * COMMIT's answer. When a statement of the tail's batch failed, PostgreSQL skipped COMMIT and
   * left the transaction block open, failed: it is rolled back before the connection goes back.
   * (A batch without BEGIN rolled back at its Sync already.)
   */
  const committed = async (commit: Promise<unknown>) => {
    try {
      return await commit;
    } catch (error) {
      if (!batched && skipped(error)) await send("rollback", [], FLUSH).catch(ignore);
      throw error;
    }
  };
  /** Set when the transaction is over: what the work still holds of it is refused from then. */
  let over = false;
  try {
    refuseUnbuildable(plan.head);
    let result: unknown;
    try {
      const { client, inSavepoint } = scoped(connection, prepare, {
        gone: session.gone,
        ended: () => ending !== undefined,
        over: () => over,
        open,
        openBatch: (params, tail) => (openBatch(params, tail) ? nextInBatch() : undefined),
      });
      endings.set(client, { end, inSavepoint });
      // Drizzle reaches the caller's work synchronously, which adopts this connection.
      opening = client;
      let running: unknown;
      try {
        running = work(client);
      } finally {
        opening = undefined;
      }
      result = await running;
      if (!ending) {
        // Built before anything is sent: a tail that throws rolls back like a work that throws,
        // never leaving the transaction open on a connection that goes back to the pool.
        const tail = plan.tail?.(result) ?? [];
        refuseUnbuildable(tail);
        end(tail);
      }
    } catch (error) {
      // Nothing the work still sends from here may run: it would go out behind the ROLLBACK,
      // outside the transaction and without its tenant.
      over = true;
      // Ended already with the work's last statement: COMMIT (or the batch's Sync) decides, and
      // rolls back if that statement failed. Otherwise nothing of the work is kept; a work that
      // failed before sending anything opened nothing. ROLLBACK is sent before the head's
      // answers are awaited: it carries the Sync they would otherwise wait for.
      const ended = ending
        ? committed(ending.commit)
        : head
          ? send("rollback", [], FLUSH)
          : Promise.resolve();
      // A head statement that failed is the cause of whatever the work then met.
      const cause = await firstFailure(head ?? [], error);
      await ended.catch(ignore);
      throw cause;
    }
    const sent = ending as NonNullable<typeof ending>;
    const opened = head as Promise<unknown>[];
    const failure = await firstFailure([...opened, ...sent.tail], undefined);
    // A COMMIT skipped after a failed statement of its batch: that statement's error says why.
    const answer = (await committed(sent.commit).catch((error: unknown) => {
      throw failure ?? error;
    })) as postgres.RowList<postgres.Row[]>;
    // A COMMIT written after the connection closed is answered by the next session's greeting.
    if (session.gone()) throw connectionClosed();
    // PostgreSQL answers COMMIT of a failed transaction with ROLLBACK, not an error.
    if (failure !== undefined) throw failure;
    // A batch's last statement is answered only once its Sync committed the batch.
    if (!batched && answer.command !== "COMMIT") {
      throw new Error("the transaction was rolled back");
    }
    return result;
  } finally {
    over = true;
    session.end();
    // A connection opened again belongs to whoever the pool opened it for. One that closed, was
    // told to close, or whose socket errored is not released by postgres.js (the patch): it is
    // the pool's already, so an error that only looks like an outage (from another pool, a
    // provider) still gives a healthy connection back.
    if (!session.gone()) connection.release();
  }
}

/** postgres.js's connection object, as its `onexecute` option hands it over. */
interface DriverConnection {
  onclose?: ((error: unknown) => void) | null;
}

/**
 * Whether the reserved connection is still the server session its BEGIN ran on. postgres.js does
 * not fail a statement written to a reserved connection that has closed: the statement waits, and
 * when the pool opens that connection again for another caller, the new session's greeting
 * answers it and the statements after it run in that session — outside any transaction, or in
 * another tenant's. So the transaction learns of the close as postgres.js's own `begin` does (its
 * first statement's `onexecute` sets the connection's `onclose`), and refuses every statement
 * after it; before that first statement (the work may await an embeddings provider first), the
 * patched `reserve()` refuses what is sent on a connection that closed (decision 044). A
 * second sign, should the first be missed: BEGIN's `state` is the connection's backend key, which
 * postgres.js rewrites in place when it opens the connection again (another pid, another session).
 */
function sameSession() {
  let closed = false;
  let driver: DriverConnection | undefined;
  let backend: postgres.State | undefined;
  let pid: number | undefined;
  const onclose = () => {
    closed = true;
  };
  return {
    beginOptions: {
      onexecute: (connection: DriverConnection) => {
        driver = connection;
        connection.onclose = onclose;
        // True: the connection may take the next statement at once (the tenant, the work's first).
        return true;
      },
    },
    follow(begin: Promise<postgres.RowList<postgres.Row[]>>) {
      begin.then((answer) => {
        backend = answer.state;
        pid = answer.state.pid;
      }, ignore);
    },
    gone: () => closed || (backend !== undefined && backend.pid !== pid),
    /** The transaction is over: the connection's next close is no longer its business. */
    end() {
      if (driver?.onclose === onclose) driver.onclose = null;
    },
  };
}

const transactionEnded = () =>
  Object.assign(new Error("the transaction ended with the work's last statement"), {
    code: "TRANSACTION_ENDED",
  });

/** Sends a transaction's tail and COMMIT: registered per transaction, by its connection. */
const endings = new WeakMap<
  postgres.Sql,
  {
    end: (tail: readonly RawStatement[], last?: Promise<unknown>) => void;
    inSavepoint: () => boolean;
  }
>();
/**
 * Set only while a `finishWith` is running its statement: the tail to send behind it, and what
 * ends the transaction right after it is sent.
 */
const finishing = new WeakMap<
  postgres.Sql,
  { tail: readonly RawStatement[]; sent: (last: Promise<unknown>) => void }
>();

/**
 * Runs the work's last statement (`last` must send exactly one on `tx` before its first `await`:
 * a statement built once, run by `runStatement` — a Drizzle query is sent only once awaited) with
 * `tail` and COMMIT written right behind it in the same write, so a read is one round trip
 * (decision 036). The statement, `tail` and COMMIT succeed or fail together; after it, the
 * transaction refuses any further statement, and has committed: a work that fails after its last
 * statement undoes nothing, so it is for a last statement that only reads (a tool call's read
 * and its audit row). Not inside a savepoint. Outside a pipelined transaction, or when `last`
 * sends nothing, it simply runs `last` (the tail then goes out after the work, as usual, from
 * the plan).
 */
export function finishWith<T>(
  tx: object,
  tail: readonly RawStatement[],
  last: () => Promise<T>,
): Promise<T> {
  const client = connectionOf(tx);
  const ending = client && endings.get(client);
  if (!client || !ending) return last();
  // Inside a savepoint COMMIT would end the whole transaction from within it.
  if (ending.inSavepoint())
    throw new TypeError("finishWith runs the transaction's last statement, not a savepoint's");
  refuseUnbuildable(tail);
  let sent = false;
  finishing.set(client, {
    tail,
    sent: (statement) => {
      finishing.delete(client);
      sent = true;
      ending.end(tail, statement);
    },
  });
  let running: Promise<T>;
  try {
    running = last();
  } finally {
    finishing.delete(client);
  }
  if (!sent) {
    // A native promise is already running and must not reject unheard; a lazy query (Drizzle's)
    // is not running, and a handler would run it: it is left alone, never sent.
    if (running instanceof Promise) running.catch(ignore);
    throw new TypeError("finishWith's statement was not sent before its first await");
  }
  return running;
}

const connectionClosed = () =>
  Object.assign(new Error("the transaction's connection was closed"), {
    code: "CONNECTION_CLOSED",
  });

/**
 * What postgres.js would refuse while building a statement, found before the statement is handed
 * to it: postgres.js's own refusal rejects the statement then in flight (on a warm connection,
 * BEGIN) instead of this one, which then waits for an answer that never comes, holding the
 * connection in an open transaction.
 */
function unbuildable(args: readonly unknown[] | undefined): Error | undefined {
  if (args === undefined) return undefined;
  if (args.length >= 65534) {
    return Object.assign(new Error("Max number of parameters (65534) exceeded"), {
      code: "MAX_PARAMETERS_EXCEEDED",
    });
  }
  if (args.includes(undefined)) {
    return Object.assign(new Error("Undefined values are not allowed"), {
      code: "UNDEFINED_VALUE",
    });
  }
  return undefined;
}

/**
 * Whether a statement's values can go in a batch: one not yet prepared on the connection is sent
 * parsed and bound at once, its values as text without their types (the postgres.js patch), so
 * only values whose text PostgreSQL reads as the type it infers. An object or an array (JSON,
 * PostgreSQL arrays) needs its type first: such a transaction is sent with BEGIN and COMMIT.
 */
function batchable(params: readonly unknown[]): boolean {
  return params.every(
    (x) =>
      x === null ||
      typeof x === "string" ||
      typeof x === "number" ||
      typeof x === "boolean" ||
      typeof x === "bigint",
  );
}

/** Whether a statement's values, each of them, can go in a batch. */
const carried = (s: RawStatement) => batchable(s.params);

/**
 * For the work's last statement (`finishWith`) sent after others: the options that begin a batch
 * inside BEGIN, continued by `tail` and ended by COMMIT, when their values allow it (decision 045).
 */
const lastInBegin = (params: readonly unknown[], tail: readonly RawStatement[]) =>
  batchable(params) && tail.every(carried) ? IN_TRANSACTION : {};

/** Whether PostgreSQL skipped the statement: an earlier one of its batch failed (the patch). */
const skipped = (error: unknown) =>
  (error as { code?: unknown } | undefined)?.code === "PIPELINE_ABORTED";

/** Throws before anything of `statements` is sent, if postgres.js would refuse one of them. */
function refuseUnbuildable(statements: readonly RawStatement[]): void {
  for (const s of statements) {
    const error = unbuildable(s.params);
    if (error) throw error;
  }
}

/** A statement refused before it is written, where postgres.js expects its pending query. */
function refused(error: Error = connectionClosed()): postgres.PendingQuery<postgres.Row[]> {
  const failed = Promise.reject(error);
  failed.catch(ignore);
  return Object.assign(failed, {
    values: () => failed,
    raw: () => failed,
    execute: () => failed,
  }) as unknown as postgres.PendingQuery<postgres.Row[]>;
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

/** Whether the transaction can still take the work's statements, and why not when it cannot. */
interface WorkState {
  /** The connection closed under the transaction (`sameSession`). */
  gone(): boolean;
  /** COMMIT went out with the work's last statement (`finishWith`). */
  ended(): boolean;
  /** The transaction is over and the connection back with the pool. */
  over(): boolean;
  /**
   * Sends BEGIN and the head, if nothing is sent yet: before any statement of the work; with
   * `first`, the values of that statement, built once, which may end their batch.
   */
  open(first?: readonly unknown[]): void;
  /**
   * For the work's last statement (`finishWith`) sent before any other: opens the transaction as
   * one batch of the head, this statement and `tail`, and gives the options this statement goes
   * with; undefined when it cannot be one batch, and nothing is sent.
   */
  openBatch(
    params: readonly unknown[],
    tail: readonly RawStatement[],
  ): postgres.UnsafeQueryOptions | undefined;
}

const transactionOver = () =>
  Object.assign(new Error("the transaction is over"), { code: "TRANSACTION_OVER" });

/** Why a statement of the work may not be sent now, if it may not. */
function refusal(state: WorkState): Error | undefined {
  if (state.gone()) return connectionClosed();
  if (state.over()) return transactionOver();
  // After COMMIT went out with the work's last statement, nothing more is the work's.
  if (state.ended()) return transactionEnded();
  return undefined;
}

/** Whether a statement was sent by `runStatement`: built once, with the values its author typed. */
const builtOnce = (options: Record<string, unknown> | undefined) => options?.builtOnce === true;

/** What of postgres.js a transaction's work has no business with: it would reach past it. */
const NOT_THE_WORKS = new Set([
  "begin",
  "release",
  "reserve",
  "listen",
  "notify",
  "subscribe",
  "file",
  "end",
  "close",
]);

/**
 * The reserved connection as Drizzle's transaction sees it: prepared statements, savepoints.
 * Every way of sending — `unsafe`, a tagged template, a savepoint — is refused once the
 * connection closed, COMMIT went out with the last statement, or the transaction is over, so
 * nothing the work still holds can run outside it or in the next tenant's transaction.
 */
function scoped(
  connection: postgres.ReservedSql,
  prepare: boolean,
  state: WorkState,
): { client: postgres.Sql; inSavepoint: () => boolean } {
  let savepoints = 0;
  let depth = 0;
  const run = (query: string) => {
    const error = refusal(state);
    if (error) return refused(error);
    state.open();
    return connection.unsafe(query, [], FLUSH);
  };
  const self: postgres.Sql = new Proxy(connection, {
    apply: (target, thisArgument, args) => {
      const error = refusal(state);
      if (error) return refused(error);
      state.open();
      return refusedAtSend(Reflect.apply(target, thisArgument, args), () => refusal(state));
    },
    get: (target, property, receiver) => {
      if (property === "unsafe") {
        return (query: string, args?: unknown[], options?: Record<string, unknown>) => {
          const error = refusal(state) ?? unbuildable(args);
          if (error) return refused(error);
          const finish = finishing.get(self);
          // A last statement sent first is one batch with the head and the tail (decision 044);
          // otherwise it is written with the tail and COMMIT that follow it (`end`), unflushed,
          // and in one batch with them inside BEGIN (decision 045).
          const batch = finish && state.openBatch(args ?? [], finish.tail);
          // A statement built once opens the transaction as it is sent, so that BEGIN and the
          // head can go in one batch with it (decision 045); any other opens it now.
          const opensAtSend = !finish && builtOnce(options);
          if (!batch && !opensAtSend) state.open();
          const sent = refusedAtSend(
            target.unsafe(query, args as never, {
              ...options,
              prepare,
              ...(batch ?? (finish ? lastInBegin(args ?? [], finish.tail) : FLUSH)),
            }),
            // The last statement goes out after `end` has sent COMMIT behind it, by design.
            finish ? () => (state.gone() ? connectionClosed() : undefined) : () => refusal(state),
            opensAtSend ? () => state.open(args ?? []) : undefined,
          );
          if (finish) {
            // Sent now, so the tail and COMMIT (or the batch's end) written next follow it.
            sent.catch(ignore);
            finish.sent(sent);
          }
          return sent;
        };
      }
      if (property === "savepoint") return savepoint;
      if (typeof property === "string" && NOT_THE_WORKS.has(property)) return undefined;
      return Reflect.get(target, property, receiver);
    },
  });
  async function savepoint(...args: unknown[]): Promise<unknown> {
    const work = args.pop() as (client: postgres.Sql) => unknown;
    const name = `north_s${savepoints++}`;
    await run(`savepoint ${name}`);
    depth++;
    try {
      const result = await work(self);
      await run(`release savepoint ${name}`);
      return result;
    } catch (error) {
      await run(`rollback to savepoint ${name}`);
      throw error;
    } finally {
      depth--;
    }
  }
  return { client: self, inSavepoint: () => depth > 0 };
}

/** A postgres.js query as its sending reads it (lib/query.js): its handler, and whether it ran. */
interface PendingSend {
  handler: ((q: unknown) => void) & { debug?: unknown };
  reject: (error: Error) => void;
  executed: boolean;
  cancel: () => unknown;
}

/**
 * A statement of a pipelined transaction is not cancelled: postgres.js skips a cancelled statement
 * at its send (BEGIN and the head, batched before it, would wait for the Sync it was to carry),
 * and drops one it has written from its queue while PostgreSQL still answers it, which hands
 * every later answer to the statement before — into the next tenant's transaction. The
 * connection's `statement_timeout` ends a statement that runs too long.
 */
function refuseCancel(): never {
  throw Object.assign(new TypeError("a statement of a tenant transaction cannot be cancelled"), {
    code: "CANCEL_REFUSED",
  });
}

/**
 * postgres.js sends a query when it is first awaited (or given a handler), not when it is made:
 * `refuse` is asked again then, so a query the work made and sends only after its transaction
 * ended is refused, instead of running outside it or in the next tenant's transaction on the same
 * connection. `before`, if given, runs right before the query is written (it opens the
 * transaction, decision 045).
 */
function refusedAtSend<Q>(query: Q, refuse: () => Error | undefined, before?: () => void): Q {
  const pending = query as unknown as PendingSend;
  // Not a query (`sql(identifier)` gives a fragment): nothing is sent.
  if (typeof pending?.handler !== "function") return query;
  pending.cancel = refuseCancel;
  const send = pending.handler;
  const checked = Object.assign(
    (q: unknown) => {
      const error = refuse();
      if (error) return pending.reject(error);
      before?.();
      send(q);
    },
    { debug: send.debug },
  );
  pending.handler = checked;
  return query;
}

/**
 * Writes a query to its connection now, where postgres.js would write it a microtask after it is
 * first given a callback (lib/query.js `handle`): BEGIN and the head so go ahead of any statement
 * of the work already waiting for its turn, and ahead of the one that ends their batch.
 */
function writeNow(query: unknown): void {
  const pending = query as PendingSend;
  pending.executed = true;
  pending.handler(query);
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
