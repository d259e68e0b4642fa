import net from "node:net";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/support/database.ts";
import { createWorkspace, type Workspace } from "../../../test/support/fixtures.ts";
import { auditStatement } from "./audit.ts";
import { connectDatabase, type DatabaseHandle, type Tx } from "./client.ts";
import { hasSqlState } from "./pg-errors.ts";
import {
  adoptConnection,
  BUILT_ONCE,
  beginPipelined,
  connectionOf,
  finishWith,
  pipelined,
  type RawStatement,
  type TransactionPlan,
} from "./pipelined-transaction.ts";
import { prepareStatement, runStatement } from "./prepared.ts";
import { withTenant } from "./tenant.ts";

/**
 * The pipelined tenant transaction (decision 035), as the app login role: the tenant is in force
 * for the work's first statement however many transactions share the pool, the tail commits with
 * the work or not at all, and a failure anywhere leaves nothing behind and the pool usable.
 */

let db: TestDatabase;
let a: Workspace;
let b: Workspace;
/** A pool of two, so concurrent transactions queue for and reuse the same connections. */
let small: DatabaseHandle;

beforeAll(async () => {
  db = await createTestDatabase();
  a = await createWorkspace(db.owner.db, "A");
  b = await createWorkspace(db.owner.db, "B");
  small = connectDatabase(db.appUrl, { max: 2, transactionPooler: db.pooler === "transaction" });
});
afterAll(async () => {
  await small?.close();
  await db.drop();
});

const tenantOf = (w: Workspace) => ({ organizationId: w.organizationId, userId: w.member.userId });
const setting = (name: string) =>
  sql`select current_setting(${name}, true) as value, pg_catalog.txid_current_if_assigned() as tx`;
const audited = (tool: string) => () => [auditStatement({ tool, outcome: "read" })];
/** One profile row of a.member's, as the work of a transaction. */
const insertAnswer = (tx: Tx, questionId: string) =>
  tx.execute(
    sql`insert into working_profile_answers (organization_id, owner_user_id, question_id, question_text, answer)
        values (${a.organizationId}, ${a.member.userId}, ${questionId}, 'Q?', 'A.')`,
  );
const auditCount = async (w: Workspace, tool: string) => {
  const [row] = await db.owner.client<{ n: number }[]>`
    select count(*)::int as n from audit_events where organization_id = ${w.organizationId} and tool = ${tool}`;
  return row?.n;
};

/** Statements built once, as a tool call's last statement is (prepared.ts). */
const TENANT_SETTING = prepareStatement(
  [],
  () => sql`select current_setting('north.organization_id', true) as value`,
  (row) => ({ value: String(row.value) }),
);
const DIVIDE_BY_ZERO = prepareStatement(
  [],
  () => sql`select 1 / 0 as n`,
  (row) => row,
);
/** A profile row, built once: as the work's first statement it ends the batch of BEGIN and the head. */
const INSERT_ANSWER = prepareStatement<
  { organizationId: string; ownerUserId: string; questionId: string },
  { version: number }
>(
  ["organizationId", "ownerUserId", "questionId"],
  (_db, p) =>
    sql`insert into working_profile_answers (organization_id, owner_user_id, question_id, question_text, answer)
        values (${p.organizationId}, ${p.ownerUserId}, ${p.questionId}, 'Q?', 'A.') returning version`,
  (row) => ({ version: Number(row.version) }),
);
const answerCount = async (questionId: string) => {
  const [row] = await db.owner.client<{ n: number }[]>`
    select count(*)::int as n from working_profile_answers where question_id = ${questionId}`;
  return row?.n;
};
/** Within `ms`, or "hung": a statement no answer comes for must fail the check, not time it out. */
const within = <T>(promise: Promise<T>, ms: number): Promise<T | "hung"> =>
  Promise.race([promise, new Promise<"hung">((r) => setTimeout(() => r("hung"), ms))]);

describe("a pipelined tenant transaction", () => {
  it("sets the tenant before the work's first statement, for every one of many concurrent transactions", async () => {
    const seen = await Promise.all(
      Array.from({ length: 60 }, (_, i) => {
        const w = i % 2 === 0 ? a : b;
        return withTenant(small.db, tenantOf(w), async (tx) => {
          const [row] = await tx.execute<{ value: string }>(setting("north.organization_id"));
          return { expected: w.organizationId, value: row?.value };
        });
      }),
    );
    for (const s of seen) expect(s.value).toBe(s.expected);
  });

  it("writes the tail in the same transaction as the work, after its statements", async () => {
    const tool = "pipelined_tail_commits";
    const rows = await withTenant(
      small.db,
      tenantOf(a),
      async (tx) => {
        await insertAnswer(tx, "pipelined-1");
        return 1;
      },
      audited(tool),
    );
    expect(rows).toBe(1);
    expect(await auditCount(a, tool)).toBe(1);
  });

  it("rolls the work back when the tail fails, and says why", async () => {
    // `audit_events_tool_shape` refuses a tool name with a capital letter.
    const failing = withTenant(
      small.db,
      tenantOf(a),
      async (tx) => {
        await insertAnswer(tx, "pipelined-2");
      },
      audited("Not_A_Tool"),
    );
    await expect(failing).rejects.toMatchObject({ code: "23514" });
    const [row] = await db.owner.client<{ n: number }[]>`
      select count(*)::int as n from working_profile_answers where question_id = 'pipelined-2'`;
    expect(row?.n).toBe(0);
  });

  it("rolls back a work that throws, sends no tail, and leaves the pool usable", async () => {
    const tool = "pipelined_not_sent";
    const failing = withTenant(
      small.db,
      tenantOf(a),
      async (tx) => {
        await insertAnswer(tx, "pipelined-3");
        throw new Error("the handler failed");
      },
      audited(tool),
    );
    await expect(failing).rejects.toThrow("the handler failed");
    expect(await auditCount(a, tool)).toBe(0);
    // Both connections of the pool still answer, each in a transaction of its own.
    const after = await Promise.all(
      [a, b, a, b].map((w) =>
        withTenant(small.db, tenantOf(w), async (tx) => {
          const [row] = await tx.execute<{ value: string }>(setting("north.organization_id"));
          return row?.value;
        }),
      ),
    );
    expect(after).toEqual([a, b, a, b].map((w) => w.organizationId));
    // …and the failed work's insert was rolled back, not left open for the next COMMIT.
    const [row] = await db.owner.client<{ n: number }[]>`
      select count(*)::int as n from working_profile_answers where question_id = 'pipelined-3'`;
    expect(row?.n).toBe(0);
  });

  it("reports a failed head statement as the cause, and runs none of the work's effects", async () => {
    const failing = pipelined({ head: [{ text: "select 1 / $1::int", params: [0] }] }, () =>
      small.db.transaction(async (tx) => {
        await insertAnswer(tx, "pipelined-4");
      }),
    );
    await expect(failing).rejects.toMatchObject({ code: "22012" });
    const [row] = await db.owner.client<{ n: number }[]>`
      select count(*)::int as n from working_profile_answers where question_id = 'pipelined-4'`;
    expect(row?.n).toBe(0);
  });

  it("keeps savepoints: a failure inside one rolls back to it and the transaction commits", async () => {
    const tool = "pipelined_savepoint";
    await withTenant(
      small.db,
      tenantOf(a),
      async (tx) => {
        await tx
          .transaction(async (inner) => {
            await inner.execute(sql`select 1 / 0`);
          })
          .catch(() => undefined);
        const [row] = await tx.execute<{ value: string }>(setting("north.user_id"));
        expect(row?.value).toBe(a.member.userId);
      },
      audited(tool),
    );
    expect(await auditCount(a, tool)).toBe(1);
  });

  it("refuses to run when Drizzle does not open the transaction at once", async () => {
    expect(() => pipelined({ head: [] }, () => Promise.resolve(1))).toThrow(
      "the pipelined transaction's plan was not taken by begin",
    );
  });

  it("ends with the work's last statement: its tail and COMMIT go with it, and nothing may follow", async () => {
    const result = await withTenant(
      small.db,
      tenantOf(a),
      async (tx) => {
        await insertAnswer(tx, "pipelined-last-1");
        const [row] = await finishWith(tx, audited("t_last")(), () =>
          runStatement(tx, TENANT_SETTING, {}),
        );
        const after = await tx.execute(sql`select 1`).then(
          () => "ran",
          (error: unknown) =>
            hasSqlState(error, "TRANSACTION_ENDED") ? "TRANSACTION_ENDED" : error,
        );
        return { value: row?.value, after };
      },
      audited("t_last_plan"),
    );
    expect(result).toEqual({ value: a.organizationId, after: "TRANSACTION_ENDED" });
    const [row] = await db.owner.client<{ n: number }[]>`
      select count(*)::int as n from working_profile_answers where question_id = 'pipelined-last-1'`;
    expect(row?.n).toBe(1);
    // The tail sent with the last statement, once; the plan's own tail never.
    expect(await auditCount(a, "t_last")).toBe(1);
    expect(await auditCount(a, "t_last_plan")).toBe(0);
  });

  it("rolls a failing last statement back with the work before it and the tail sent with it", async () => {
    const failed = await withTenant(small.db, tenantOf(a), async (tx) => {
      await insertAnswer(tx, "pipelined-last-2");
      await finishWith(tx, audited("t_last_failed")(), () => runStatement(tx, DIVIDE_BY_ZERO, {}));
    }).catch((error: unknown) => error);
    expect(hasSqlState(failed, "22012")).toBe(true);
    const [row] = await db.owner.client<{ n: number }[]>`
      select count(*)::int as n from working_profile_answers where question_id = 'pipelined-last-2'`;
    expect(row?.n).toBe(0);
    expect(await auditCount(a, "t_last_failed")).toBe(0);
    // The pool goes on.
    const [after] = await withTenant(small.db, tenantOf(b), (tx) =>
      tx.execute<{ value: string }>(setting("north.organization_id")),
    );
    expect(after?.value).toBe(b.organizationId);
  });

  it("keeps its one connection through every failure of a batch inside BEGIN, rolled back and idle for the next tenant", async () => {
    // Straight to PostgreSQL, a pool of one: every call runs in the same server session.
    const one = connectDatabase(db.directAppUrl, { max: 1 });
    const session = () =>
      withTenant(one.db, tenantOf(b), async (tx) => {
        const [row] = await tx.execute<{ pid: number; value: string }>(
          sql`select pg_backend_pid() as pid, current_setting('north.organization_id', true) as value`,
        );
        return row;
      });
    const insertFirst = (questionId: string) => async (tx: Tx) => {
      const values = { organizationId: a.organizationId, ownerUserId: a.member.userId, questionId };
      await runStatement(tx, INSERT_ANSWER, values);
    };
    try {
      const before = await session();
      const failures = {
        // BEGIN, a head that fails, and the work's first statement, built once, in one batch.
        head: await pipelined({ head: [{ text: "select 1 / $1::int", params: [0] }] }, () =>
          one.db.transaction(async (tx) => {
            adoptConnection(tx);
            await insertFirst("batch-head-failed")(tx);
          }),
        ).catch((error: unknown) => error),
        // The tail (its audit row refused) in one batch with COMMIT, which PostgreSQL skips.
        tail: await withTenant(
          one.db,
          tenantOf(a),
          insertFirst("batch-tail-failed"),
          audited("Not_A_Tool"),
        ).catch((error: unknown) => error),
        // A last statement sent after others, in one batch with its tail and COMMIT.
        last: await withTenant(one.db, tenantOf(a), async (tx) => {
          await insertFirst("batch-last-failed")(tx);
          await finishWith(tx, audited("t_batch_last")(), () =>
            runStatement(tx, DIVIDE_BY_ZERO, {}),
          );
        }).catch((error: unknown) => error),
      };
      expect(hasSqlState(failures.head, "22012")).toBe(true);
      expect(hasSqlState(failures.tail, "23514")).toBe(true);
      expect(hasSqlState(failures.last, "22012")).toBe(true);
      for (const questionId of ["batch-head-failed", "batch-tail-failed", "batch-last-failed"]) {
        expect(await answerCount(questionId)).toBe(0);
      }
      expect(await auditCount(a, "t_batch_last")).toBe(0);
      // The same session, out of every failed transaction, serves the next tenant as its own.
      const after = await session();
      expect(after?.pid).toBe(before?.pid);
      expect(after?.value).toBe(b.organizationId);
    } finally {
      await one.close();
    }
  });

  it("sends a last statement held back behind one being described, with the tail and COMMIT that end its batch", async () => {
    // A connection that has prepared nothing yet: a statement with values is described first,
    // and what the transaction sends behind it waits in the reserved connection's queue.
    const cold = connectDatabase(db.directAppUrl, { max: 1 });
    try {
      const read = withTenant(
        cold.db,
        tenantOf(a),
        async (tx) => {
          const c = connectionOf(tx);
          if (!c) throw new Error("the transaction adopted no connection");
          const first = c
            .unsafe("select $1::text as first", ["north"], EXTENDED)
            .then((rows) => rows[0]?.first);
          // Sent (postgres.js sends a query a microtask after it is handed a callback), and
          // being described when the last statement comes.
          await afterMicrotasks(3, () => undefined);
          const [last] = await finishWith(tx, audited("t_held_back")(), () =>
            runStatement(tx, TENANT_SETTING, {}),
          );
          return [await first, last?.value];
        },
        audited("t_held_back_plan"),
      );
      expect(await within(read, 5_000)).toEqual(["north", a.organizationId]);
      expect(await auditCount(a, "t_held_back")).toBe(1);
    } finally {
      await cold.close();
    }
  });

  it("refuses a last statement that is not sent at once, before anything of it runs", async () => {
    const refused = await withTenant(small.db, tenantOf(a), async (tx) =>
      Promise.resolve()
        .then(() => finishWith(tx, audited("t_last_late")(), () => tx.execute(sql`select 1`)))
        .then(
          () => "ran",
          (error: Error) => error.message,
        ),
    );
    expect(refused).toBe("finishWith's statement was not sent before its first await");
    expect(await auditCount(a, "t_last_late")).toBe(0);
  });
});

/**
 * A postgres.js pool of one connection whose socket records every write, and the texts of the
 * statements each write carried, in order (decision 043).
 */
function spiedPool(url: string, { backpressure = false } = {}) {
  const writes: string[] = [];
  const sockets: net.Socket[] = [];
  const { hostname, port } = new URL(url);
  // postgres.js's `socket` option (a connected socket to use), which its types leave out.
  const options = {
    max: 1,
    onnotice: () => {},
    prepare: db.pooler !== "transaction",
    socket: () =>
      new Promise<net.Socket>((resolve, reject) => {
        const socket = net.connect(Number(port), hostname, () => resolve(socket));
        sockets.push(socket);
        socket.once("error", reject);
        const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
        socket.write = ((chunk: Uint8Array | string, ...rest: unknown[]) => {
          writes.push(Buffer.from(chunk).toString("latin1"));
          // A socket whose buffer is full says so, as a large value or a slow network makes it.
          return write(chunk, ...rest) && !backpressure;
        }) as typeof socket.write;
      }),
  };
  const pool = postgres(url, options as postgres.Options<Record<string, never>>);
  /** Which of `markers` each write since `from` carried, in the order they appear in it. */
  const carried = (markers: readonly string[], from = 0) =>
    writes.slice(from).map((w) =>
      markers
        .map((m) => ({ m, at: w.indexOf(m) }))
        .filter(({ at }) => at >= 0)
        .sort((x, y) => x.at - y.at)
        .map(({ m }) => m),
    );
  return { pool, writes, carried, sockets };
}

/** `read()` after `n` turns of the microtask queue: before any timer or immediate can run. */
async function afterMicrotasks<T>(n: number, read: () => T): Promise<T> {
  for (let i = 0; i < n; i++) await undefined;
  return read();
}

/**
 * How many ReadyForQuery answers a write asks for: one per Sync (the end of an extended-protocol
 * batch) and one per simple Query (a statement postgres.js sends without values). Read message
 * by message: a type byte, then a length that counts itself.
 */
const syncs = (write: string) => {
  const bytes = Buffer.from(write, "latin1");
  let answers = 0;
  for (let at = 0; at < bytes.length; at += 1 + bytes.readInt32BE(at + 1)) {
    if (bytes[at] === 0x53 || bytes[at] === 0x51) answers++;
  }
  return answers;
};
const marker = (name: string): RawStatement => ({ text: `select '${name}' as marker`, params: [] });
const EXTENDED = { simple: false } as postgres.UnsafeQueryOptions;
const MARKERS = ["begin", "north-head", "north-first", "north-last", "north-tail", "commit"];

/**
 * Runs `use` on a spied pool of one (`spiedPool`), warmed by one statement, then ends the pool:
 * `from` is the first write after the warm-up, and `transaction` runs a pipelined transaction of
 * `plan` on it.
 */
async function onSpiedPool<T>(
  options: { backpressure?: boolean },
  use: (
    spied: ReturnType<typeof spiedPool>,
    from: number,
    transaction: <R>(plan: TransactionPlan, work: (client: postgres.Sql) => R) => Promise<R>,
  ) => Promise<T>,
): Promise<T> {
  const spied = spiedPool(db.appUrl, options);
  try {
    await spied.pool`select 1`;
    const transaction = <R>(plan: TransactionPlan, work: (client: postgres.Sql) => R) =>
      pipelined(
        plan,
        () => beginPipelined(spied.pool, db.pooler !== "transaction", work) as Promise<R>,
      );
    return await use(spied, spied.writes.length, transaction);
  } finally {
    await spied.pool.end({ timeout: 1 });
  }
}

describe("what a pipelined transaction writes to its socket", () => {
  it("sends a read (head, last statement, tail) as one write with one Sync and no BEGIN or COMMIT, before the event loop's turn ends", async () => {
    await onSpiedPool({}, async (spied, from, transaction) => {
      let seen: Promise<number> | undefined;
      const rows = await transaction({ head: [marker("north-head")] }, (client) => {
        const tx = {};
        adoptConnection(tx);
        const last = finishWith(tx, [marker("north-tail")], () =>
          client.unsafe("select 'north-last' as marker", [], EXTENDED),
        );
        // Immediates (postgres.js's write timer) run only after the microtask queue is empty.
        seen = afterMicrotasks(50, () => spied.writes.length - from);
        return last;
      });
      expect(rows).toEqual([{ marker: "north-last" }]);
      expect(await seen).toBe(1);
      // One batch (decision 044): PostgreSQL's implicit transaction, committed by its one Sync.
      expect(spied.carried(MARKERS, from)).toEqual([["north-head", "north-last", "north-tail"]]);
      expect(spied.writes.slice(from).map(syncs)).toEqual([1]);
    });
  });

  it("finishes a batch whose socket reports backpressure: the statement with the Sync is not held back", async () => {
    await onSpiedPool({ backpressure: true }, async (_spied, _from, transaction) => {
      const read = transaction({ head: [marker("north-head")] }, (client) => {
        const tx = {};
        adoptConnection(tx);
        // Over 1 KB: postgres.js writes it to the socket at once, which answers "full".
        return finishWith(tx, [marker("north-tail")], () =>
          client.unsafe("select length($1::text) as n", ["x".repeat(4_000)], EXTENDED),
        );
      });
      const settled = await Promise.race([
        read,
        new Promise((resolve) => setTimeout(() => resolve("hung"), 4_000)),
      ]);
      expect(settled).toEqual([{ n: 4_000 }]);
    });
  });

  it("keeps a reserved connection its own when its socket drains with nothing in flight", async () => {
    await onSpiedPool({}, async (spied, _from, transaction) => {
      const seen = await transaction({ head: [marker("north-head")] }, async (client) => {
        adoptConnection(client);
        await client.unsafe("select 1 as one", [], EXTENDED);
        // The socket had reported backpressure and empties now, between two statements.
        spied.sockets.at(-1)?.emit("drain");
        // Another caller of the pool of one waits for the connection: handed out, it would run
        // inside this transaction, with its tenant.
        const other = spied.pool`select 1 as other`;
        other.catch(() => {});
        return Promise.race([other, new Promise((r) => setTimeout(() => r("waited"), 300))]);
      });
      expect(seen).toBe("waited");
    });
  });

  it("sends a transaction whose work sends nothing (the tenant and the tail) as one write with one Sync, and commits it", async () => {
    await onSpiedPool({}, async (spied, from, transaction) => {
      const done = await transaction(
        { head: [marker("north-head")], tail: () => [marker("north-tail")] },
        async (client) => {
          adoptConnection(client);
          return "nothing sent";
        },
      );
      expect(done).toBe("nothing sent");
      expect(spied.carried(MARKERS, from)).toEqual([["north-head", "north-tail"]]);
      expect(spied.writes.slice(from).map(syncs)).toEqual([1]);
    });
  });

  it("sends a write's first round trip (BEGIN, head, first statement) as one write, at once, and the tail with COMMIT", async () => {
    await onSpiedPool({}, async (spied, from, transaction) => {
      let seen: number | undefined;
      await transaction(
        { head: [marker("north-head")], tail: () => [marker("north-tail")] },
        async (client) => {
          // As a save reaches its statement: some microtasks after BEGIN and the head were sent.
          await afterMicrotasks(5, () => undefined);
          const first = client.unsafe("select 'north-first' as marker", [], EXTENDED);
          first.catch(() => {});
          seen = await afterMicrotasks(50, () => spied.writes.length - from);
          return first;
        },
      );
      expect(seen).toBe(1);
      expect(spied.carried(MARKERS, from)).toEqual([
        ["begin", "north-head", "north-first"],
        ["north-tail", "commit"],
      ]);
      // A statement not built once (Drizzle's own) does not end a batch: BEGIN and the head are
      // answered each. The tail is one batch with COMMIT (decision 045).
      expect(spied.writes.slice(from).map(syncs)).toEqual([3, 1]);
    });
  });

  it("sends a save as two writes with one Sync each: BEGIN, the head and its statement built once; the tail and COMMIT", async () => {
    await onSpiedPool({}, async (spied, from, transaction) => {
      // A head with values, as the tenant's proof has: sent on its own, it has a Sync of its own.
      const head = { text: "select 'north-head' as marker, $1::text as value", params: ["proof"] };
      const saved = await transaction(
        { head: [head], tail: () => [marker("north-tail")] },
        async (client) => {
          const [row] = await client.unsafe("select 'north-first' as marker", [], BUILT_ONCE);
          return row?.marker;
        },
      );
      expect(saved).toBe("north-first");
      expect(spied.carried(MARKERS, from)).toEqual([
        ["begin", "north-head", "north-first"],
        ["north-tail", "commit"],
      ]);
      expect(spied.writes.slice(from).map(syncs)).toEqual([1, 1]);
    });
  });
});
