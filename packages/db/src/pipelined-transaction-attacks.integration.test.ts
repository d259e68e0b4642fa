import net from "node:net";
import { sql } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/support/database.ts";
import { createWorkspace, type Workspace } from "../../../test/support/fixtures.ts";
import { connectDatabase, type DatabaseHandle } from "./client.ts";
import { hasSqlState, isCredentialRefused } from "./pg-errors.ts";
import {
  adoptConnection,
  BUILT_ONCE,
  connectionOf,
  finishWith,
  pipelined,
} from "./pipelined-transaction.ts";
import { withTenant } from "./tenant.ts";

/**
 * Attacks on the pipelined tenant transaction (decision 035), each on a pool of one connection
 * straight to PostgreSQL, so the next user of the pool is the next user of the same server
 * session: whatever one transaction leaves on it, the next one meets.
 */

let db: TestDatabase;
let a: Workspace;
let b: Workspace;
const pools: DatabaseHandle[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  a = await createWorkspace(db.owner.db, "A");
  b = await createWorkspace(db.owner.db, "B");
});
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});
afterAll(async () => {
  await db.drop();
});

/** A pool of one connection to PostgreSQL itself (no pooler), closed after the test. */
const onePool = () => {
  const pool = connectDatabase(db.directAppUrl, { max: 1, closeTimeoutS: 1 });
  pools.push(pool);
  return pool;
};
const tenantOf = (w: Workspace) => ({ organizationId: w.organizationId, userId: w.member.userId });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const insertAnswer = (w: Workspace, questionId: string) =>
  sql`insert into working_profile_answers (organization_id, owner_user_id, question_id, question_text, answer)
      values (${w.organizationId}, ${w.member.userId}, ${questionId}, 'Q?', 'A.')`;
const answers = async (questionId: string) => {
  const [row] = await db.owner.client<{ n: number }[]>`
    select count(*)::int as n from working_profile_answers where question_id = ${questionId}`;
  return row?.n;
};
const tenantSetting = sql`select current_setting('north.organization_id', true) as value`;
const TENANT_SETTING = "select current_setting('north.organization_id', true) as value";
/** The connection under a tenant transaction's `tx`, as the statements built once reach it. */
const connection = (tx: object) => {
  const c = connectionOf(tx);
  if (!c) throw new Error("the transaction adopted no connection");
  return c;
};
const EXTENDED = { simple: false } as Parameters<ReturnType<typeof connection>["unsafe"]>[2];

/**
 * A table whose rows carry the organisation their transaction had set (`org`), and how to read
 * them back, in order of `a`.
 */
const tenantTable = async (name: string) => {
  await db.owner.client.unsafe(`
    create table ${name} (a text, org text default current_setting('north.organization_id', true));
    grant all on ${name} to public`);
  return async () =>
    (await db.owner.client.unsafe<{ a: string; org: string }[]>(
      `select a, org from ${name} order by a`,
    )) as { a: string; org: string }[];
};
/** A call of tenant A whose last statement inserts `value` into `table`, returning every column. */
const insertingCall = (pool: DatabaseHandle, table: string) => (value: string) =>
  withTenant(pool.db, tenantOf(a), async (tx) =>
    finishWith(tx, [], () =>
      connection(tx).unsafe(`insert into ${table} (a) values ($1) returning *`, [value], EXTENDED),
    ),
  );

type Settled =
  | { state: "resolved"; value: unknown }
  | { state: "rejected"; error: unknown }
  | { state: "hung" };
/** How `promise` stands after `ms`: a transaction must end, one way or the other. */
const within = (promise: Promise<unknown>, ms: number): Promise<Settled> =>
  Promise.race([
    promise.then(
      (value) => ({ state: "resolved" as const, value }),
      (error: unknown) => ({ state: "rejected" as const, error }),
    ),
    sleep(ms).then(() => ({ state: "hung" as const })),
  ]);

/** Ends the server session of `pid`, as an operator, an idle timeout or a failover would. */
const terminate = async (pid: number) => {
  await db.owner.client`select pg_terminate_backend(${pid})`;
  // Long enough for postgres.js to see the socket close.
  await sleep(300);
};

describe("attacks on a pipelined tenant transaction", () => {
  it("a tail that throws while it is built leaves no transaction open for the next user of the connection", async () => {
    const pool = onePool();
    const failing = withTenant(
      pool.db,
      tenantOf(a),
      async (tx) => {
        await tx.execute(insertAnswer(a, "attack-tail-throws"));
        return 1;
      },
      () => {
        // As a handler's result without its `audit`, or a fingerprinter that throws, would.
        throw new TypeError("the audit row could not be built");
      },
    );
    await expect(failing).rejects.toThrow("the audit row could not be built");

    // The next statement on the connection, outside any transaction, carries no tenant…
    const [outside] = await pool.client<{ value: string | null; tx: string | null }[]>`
      select current_setting('north.organization_id', true) as value,
             pg_catalog.txid_current_if_assigned()::text as tx`;
    expect(outside?.value ?? "").toBe("");
    expect(outside?.tx).toBeNull();
    // …and another tenant's transaction on it commits only its own work: the failed call's
    // insert, which has no audit row, is not committed with it.
    await withTenant(pool.db, tenantOf(b), async (tx) => tx.execute(sql`select 1`));
    expect(await answers("attack-tail-throws")).toBe(0);
  });

  it("a work statement that fails before it is sent fails the call, and the pool goes on", async () => {
    const pool = onePool();
    // The tenant statement is prepared on the connection, so BEGIN, the tenant and the work's
    // first statement are in flight together, as on every warm connection.
    await withTenant(pool.db, tenantOf(a), async (tx) => tx.execute(sql`select 1`));
    const failing = withTenant(pool.db, tenantOf(a), async (tx) =>
      // A store handed an undefined value (postgres.js refuses it before writing anything).
      tx.execute(sql`select ${sql.param(undefined)}::text as value`),
    );
    const settled = await within(failing, 3_000);
    expect(settled.state).toBe("rejected");
    expect(settled.state === "rejected" && hasSqlState(settled.error, "UNDEFINED_VALUE")).toBe(
      true,
    );
    const after = await within(
      withTenant(pool.db, tenantOf(b), async (tx) => tx.execute(tenantSetting)),
      3_000,
    );
    expect(after).toMatchObject({ state: "resolved", value: [{ value: b.organizationId }] });
  });

  it("a connection that dies between the work's statements fails the call instead of hanging it", async () => {
    const pool = onePool();
    const running = withTenant(pool.db, tenantOf(a), async (tx) => {
      const [row] = await tx.execute<{ pid: number }>(sql`select pg_backend_pid() as pid`);
      await terminate(Number(row?.pid));
      await tx.execute(insertAnswer(a, "attack-dead-connection"));
    });
    const settled = await within(running, 3_000);
    expect(settled.state).toBe("rejected");
    expect(await answers("attack-dead-connection")).toBe(0);
  });

  it("a connection that dies while statements wait behind one being described fails them all instead of hanging them", async () => {
    const pool = onePool();
    const [known] = await withTenant(pool.db, tenantOf(a), async (tx) =>
      tx.execute<{ pid: number }>(sql`select pg_backend_pid() as pid`),
    );
    // A statement with parameters that this session has not prepared yet is described first;
    // postgres.js holds the connection's next statements back until it is answered (the state
    // every connection is in after a restart of PostgreSQL, when every statement is new).
    const running = withTenant(pool.db, tenantOf(a), async (tx) => {
      const slow = tx.execute(sql`select pg_catalog.pg_sleep(${0.8}) as slept`);
      const waiting = tx.execute(sql`select ${"held back"}::text as value`);
      // Each is awaited, as a store awaits its statements one after another.
      const settled = await Promise.allSettled([slow, waiting]);
      for (const s of settled) if (s.status === "rejected") throw s.reason;
      return settled;
    });
    running.catch(() => {});
    await sleep(200);
    await terminate(Number(known?.pid));
    const settled = await within(running, 3_000);
    expect(settled.state).toBe("rejected");
    // …and the pool opens the connection again for the next call, which is not handed the old
    // session's last words ("terminating connection") as its own failure.
    const after = await within(
      withTenant(pool.db, tenantOf(b), async (tx) => tx.execute(tenantSetting)),
      3_000,
    );
    expect(after).toMatchObject({ state: "resolved", value: [{ value: b.organizationId }] });
  });

  it("a connection that dies mid-transaction and is opened again for another tenant never runs the first call's statements", async () => {
    const pool = onePool();
    const seenByA: unknown[] = [];
    const victim = withTenant(pool.db, tenantOf(a), async (tx) => {
      const [row] = await tx.execute<{ pid: number }>(sql`select pg_backend_pid() as pid`);
      await terminate(Number(row?.pid));
      // Written to a connection that is gone.
      seenByA.push(await tx.execute<{ value: string }>(tenantSetting));
      await sleep(300);
      seenByA.push(await tx.execute<{ value: string }>(tenantSetting));
      await tx.execute(insertAnswer(a, "attack-reopened"));
    });
    victim.catch(() => {});
    await sleep(400);
    // Another tenant's call: it opens the pool's one connection again, and holds its transaction.
    const other = withTenant(pool.db, tenantOf(b), async (tx) => {
      const [row] = await tx.execute<{ value: string }>(tenantSetting);
      await sleep(800);
      return row?.value;
    });
    const [first, second] = await Promise.all([within(victim, 4_000), within(other, 4_000)]);
    // The first call fails (its connection died) and never reads with B's tenant.
    expect(first.state).toBe("rejected");
    expect(JSON.stringify(seenByA)).not.toContain(b.organizationId);
    expect(second).toMatchObject({ state: "resolved", value: b.organizationId });
    // A's insert, written as B, is nowhere.
    expect(await answers("attack-reopened")).toBe(0);
  });

  it("a query the work made but sends only after its transaction ended never runs in the next tenant's transaction", async () => {
    const pool = onePool();
    // postgres.js sends a query when it is first awaited, not when it is made.
    let late: { unsafe?: Promise<unknown>; tagged?: Promise<unknown> } = {};
    await withTenant(pool.db, tenantOf(a), async (tx) => {
      const c = connection(tx);
      late = {
        unsafe: c.unsafe(TENANT_SETTING, [], EXTENDED) as unknown as Promise<unknown>,
        tagged: c`select current_setting('north.organization_id', true) as value`,
      };
      await tx.execute(sql`select 1`);
    });
    // B's transaction holds the pool's one connection while A's queries are awaited.
    const seen = await withTenant(pool.db, tenantOf(b), async (tx) => {
      await tx.execute(tenantSetting);
      const unsafe = await within(late.unsafe as Promise<unknown>, 1_000);
      const tagged = await within(late.tagged as Promise<unknown>, 1_000);
      return { unsafe, tagged };
    });
    expect(JSON.stringify(seen)).not.toContain(b.organizationId);
    for (const settled of [seen.unsafe, seen.tagged]) {
      expect(settled.state).toBe("rejected");
      if (settled.state === "rejected") {
        expect(hasSqlState(settled.error, "TRANSACTION_OVER")).toBe(true);
      }
    }
  });

  it("a query the work made before its last statement and sends after it is refused, not committed outside the transaction", async () => {
    const pool = onePool();
    const outcome = await withTenant(pool.db, tenantOf(a), async (tx) => {
      const c = connection(tx);
      const insert = c.unsafe(
        "insert into working_profile_answers (organization_id, owner_user_id, question_id, question_text, answer) values ($1, $2, 'attack-late-insert', 'Q?', 'A.')",
        [a.organizationId, a.member.userId],
        EXTENDED,
      ) as unknown as Promise<unknown>;
      await finishWith(tx, [], () => c.unsafe(TENANT_SETTING, [], EXTENDED));
      return within(insert, 2_000);
    });
    expect(outcome.state).toBe("rejected");
    if (outcome.state === "rejected") {
      expect(hasSqlState(outcome.error, "TRANSACTION_ENDED")).toBe(true);
    }
    await sleep(200);
    expect(await answers("attack-late-insert")).toBe(0);
  });

  it("a backend killed under a transaction, with the next statement written before the socket closes, never wedges the pool", async () => {
    // The race (a statement written after the socket's error, before its close) is hit most
    // of the time, not every time: eight tries.
    for (let attempt = 0; attempt < 8; attempt++) {
      const pool = onePool();
      const [known] = await withTenant(pool.db, tenantOf(a), async (tx) =>
        tx.execute<{ pid: number }>(sql`select pg_backend_pid() as pid`),
      );
      const victim = withTenant(pool.db, tenantOf(a), async (tx) => {
        await tx.execute(sql`select 1`);
        await db.owner.client`select pg_terminate_backend(${Number(known?.pid)})`;
        const c = connection(tx);
        const first = await within(c.unsafe(TENANT_SETTING, [], EXTENDED), 1_500);
        const second = await within(c.unsafe(TENANT_SETTING, [], EXTENDED), 1_500);
        return [first.state, second.state];
      });
      const next = withTenant(pool.db, tenantOf(b), (tx) => tx.execute(tenantSetting));
      const [failed, served] = await Promise.all([within(victim, 5_000), within(next, 5_000)]);
      // The killed call fails or reports its statements failed; none of them waits forever.
      expect(JSON.stringify(failed)).not.toContain("hung");
      expect(served.state).toBe("resolved");
      expect(JSON.stringify(served)).toContain(b.organizationId);
      await pools.splice(pools.indexOf(pool), 1)[0]?.close();
    }
  });

  it("a last statement whose prepared plan a schema change invalidated fails its call, and is not run again after COMMIT", async () => {
    const rows = await tenantTable("attack_retry");
    const call = insertingCall(onePool(), "attack_retry");
    await call("before");
    // A migration while the server runs: the connection's prepared insert no longer fits.
    await db.owner.client.unsafe("alter table attack_retry add column extra int");
    const after = await within(call("after"), 4_000);
    expect(after.state).toBe("rejected");
    await sleep(200);
    expect((await rows()).map((r) => r.a)).toEqual(["before"]);
  });

  it("a statement whose prepared plan a schema change invalidated is prepared again at its connection's next call", async () => {
    const rows = await tenantTable("attack_stale");
    const call = insertingCall(onePool(), "attack_stale");
    await call("before");
    await db.owner.client.unsafe("alter table attack_stale add column extra int");
    expect((await within(call("stale"), 4_000)).state).toBe("rejected");
    // Forgotten, not kept: a statement kept stale would fail every call on the connection.
    expect((await within(call("again"), 4_000)).state).toBe("resolved");
    expect(await rows()).toEqual([
      { a: "again", org: a.organizationId },
      { a: "before", org: a.organizationId },
    ]);
  });

  it("a statement postgres.js cannot build behind one in flight fails alone, and neither the call nor the pool hangs", async () => {
    const pool = onePool();
    // Drizzle's driver has postgres.js pass a raw Date through; its Bind then throws.
    const unbuildableDate = () =>
      withTenant(pool.db, tenantOf(a), (tx) =>
        tx.execute(sql`select ${new Date()}::timestamptz as t`),
      );
    const first = await within(unbuildableDate(), 3_000);
    const second = await within(unbuildableDate(), 3_000);
    const next = await within(
      withTenant(pool.db, tenantOf(b), (tx) => tx.execute(tenantSetting)),
      3_000,
    );
    expect([first.state, second.state]).toEqual(["rejected", "rejected"]);
    expect(next.state).toBe("resolved");
    expect(JSON.stringify(next)).toContain(b.organizationId);
  });

  it("a statement the work sends while its failed transaction rolls back is refused, not run outside it without a tenant", async () => {
    const pool = onePool();
    let probe: Promise<unknown> | undefined;
    const call = withTenant(pool.db, tenantOf(a), async (tx) => {
      // A branch of the work that goes on after another branch failed (a Promise.all).
      const branch = (async () => {
        await tx.execute(sql`select pg_catalog.pg_sleep(0.2)`);
        return tx.execute(sql`select current_setting('north.organization_id', true) as value,
          pg_catalog.txid_current_if_assigned()::text as tx`);
      })();
      branch.catch(() => {});
      probe = branch;
      // Keeps the ROLLBACK in flight behind it while the branch sends its statement.
      tx.execute(sql`select pg_catalog.pg_sleep(0.6)`).then(
        () => {},
        () => {},
      );
      await sleep(20);
      throw new Error("the work failed");
    });
    expect((await within(call, 4_000)).state).toBe("rejected");
    expect((await within(probe as Promise<unknown>, 4_000)).state).toBe("rejected");
  });

  it("a work that fails with an error that only looks like an outage gives its healthy connection back to the pool", async () => {
    const pool = onePool();
    const failed = withTenant(pool.db, tenantOf(a), async () => {
      // From Redis, an HTTP call or another pool: not this connection's.
      throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    });
    expect((await within(failed, 4_000)).state).toBe("rejected");
    const next = await within(
      withTenant(pool.db, tenantOf(b), async (tx) => tx.execute(tenantSetting)),
      3_000,
    );
    expect(next).toMatchObject({ state: "resolved", value: [{ value: b.organizationId }] });
  });

  it("a pool whose transactions were refused while PostgreSQL was unreachable opens them again once it is back", async () => {
    // PostgreSQL behind a door of this test's own: shut (connections refused), then open.
    const target = new URL(db.directAppUrl);
    let door: net.Server | undefined;
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, "127.0.0.1", () => {
        const address = probe.address() as net.AddressInfo;
        probe.close(() => resolve(address.port));
      });
    });
    const open = () =>
      new Promise<void>((resolve) => {
        door = net
          .createServer((client) => {
            const server = net.connect(Number(target.port), target.hostname);
            client.pipe(server).pipe(client);
            client.on("error", () => server.destroy());
            server.on("error", () => client.destroy());
          })
          .listen(port, "127.0.0.1", () => resolve());
      });
    const url = new URL(db.directAppUrl);
    url.port = String(port);
    const pool = connectDatabase(url.toString(), {
      max: 1,
      closeTimeoutS: 1,
      connectTimeoutMs: 1_000,
    });
    pools.push(pool);
    try {
      // Refused, several at once and one after another, as calls during an outage are.
      const refused = await Promise.all(
        [1, 2, 3].map(() =>
          within(
            withTenant(pool.db, tenantOf(a), async () => 1),
            4_000,
          ),
        ),
      );
      for (const attempt of refused) expect(attempt.state).toBe("rejected");
      expect(
        (
          await within(
            withTenant(pool.db, tenantOf(a), async () => 1),
            4_000,
          )
        ).state,
      ).toBe("rejected");
      await open();
      // postgres.js 3.4.9 handed the first connection to open to a reserve refused earlier,
      // which never released it: with a pool of one, every later call hung (patched).
      const back = await within(
        withTenant(pool.db, tenantOf(a), async (tx) => (await tx.execute(tenantSetting))[0]),
        6_000,
      );
      expect(back).toMatchObject({ state: "resolved", value: { value: a.organizationId } });
    } finally {
      // The door's close waits for its connections: the pool's go first.
      await pools.splice(pools.indexOf(pool), 1)[0]?.close();
      await new Promise((resolve) => (door ? door.close(resolve) : resolve(undefined)));
    }
  });
});

/**
 * A transaction whose work sends only its last statement (a tool call's read), or nothing (a
 * refused call's audit row), goes out as one batch: the head, that statement and the tail with
 * one Sync and no BEGIN or COMMIT, PostgreSQL's implicit transaction of a pipeline (decision
 * 044). What it must never do is leave that transaction open for the next user of the connection,
 * run a statement after one that failed, or run one outside it.
 */
describe("attacks on a tenant transaction sent as one batch", () => {
  const insertInto = (table: string, value: string) => ({
    text: `insert into ${table} (a) values ($1)`,
    params: [value],
  });
  const outside = async (pool: DatabaseHandle) => {
    const [row] = await pool.client<{ value: string | null; tx: string | null }[]>`
      select current_setting('north.organization_id', true) as value,
             pg_catalog.txid_current_if_assigned()::text as tx`;
    return { value: row?.value ?? "", tx: row?.tx ?? null };
  };

  it("a read that committed or failed leaves no transaction and no tenant on the connection", async () => {
    const rows = await tenantTable("batch_clean");
    const pool = onePool();
    const read = (last: string) =>
      withTenant(pool.db, tenantOf(a), async (tx) =>
        finishWith(tx, [insertInto("batch_clean", last)], () =>
          connection(tx).unsafe(last, [], EXTENDED),
        ),
      );
    // Cold (each statement parsed, described and bound in the batch's one write), then warm.
    for (let i = 0; i < 2; i++) {
      const ok = await within(read(TENANT_SETTING), 4_000);
      expect(ok).toMatchObject({ state: "resolved", value: [{ value: a.organizationId }] });
      expect(await outside(pool)).toEqual({ value: "", tx: null });
    }
    // A last statement that fails: the tail behind it does not run, and the call says why.
    const failed = await within(read("select 1 / 0 as never"), 4_000);
    expect(failed.state).toBe("rejected");
    expect(failed.state === "rejected" && hasSqlState(failed.error, "22012")).toBe(true);
    expect(await outside(pool)).toEqual({ value: "", tx: null });
    // Another tenant's transaction on the same session commits only its own work.
    const next = await within(
      withTenant(pool.db, tenantOf(b), async (tx) => tx.execute(tenantSetting)),
      4_000,
    );
    expect(next).toMatchObject({ state: "resolved", value: [{ value: b.organizationId }] });
    expect(await rows()).toEqual([
      { a: TENANT_SETTING, org: a.organizationId },
      { a: TENANT_SETTING, org: a.organizationId },
    ]);
  });

  it("a batch whose tenant is refused runs nothing after it: neither the work's statement nor the tail", async () => {
    const rows = await tenantTable("batch_refused");
    const pool = onePool();
    const proof = {
      apiTokenHash: "0".repeat(64),
      tokenId: a.member.userId,
      role: "member" as const,
      scopes: ["profile:write"],
    };
    const refused = withTenant(
      pool.db,
      tenantOf(a),
      async (tx) =>
        finishWith(tx, [insertInto("batch_refused", "tail")], () =>
          connection(tx).unsafe(
            "insert into batch_refused (a) values ($1) returning a",
            ["work"],
            EXTENDED,
          ),
        ),
      undefined,
      { proof },
    );
    const settled = await within(refused, 4_000);
    expect(settled.state).toBe("rejected");
    expect(settled.state === "rejected" && isCredentialRefused(settled.error)).toBe(true);
    expect(await rows()).toEqual([]);
    expect(await outside(pool)).toEqual({ value: "", tx: null });
  });

  it("a value a batch cannot carry sends its transaction with BEGIN and COMMIT: the call fails alone and the connection stays", async () => {
    await db.owner.client.unsafe(`
      create table batch_typed (doc jsonb, org text default current_setting('north.organization_id', true));
      grant all on batch_typed to public`);
    const pool = onePool();
    const pid = () =>
      withTenant(pool.db, tenantOf(a), async (tx) =>
        finishWith(tx, [], () =>
          connection(tx).unsafe("select pg_backend_pid() as pid", [], EXTENDED),
        ),
      );
    const before = await pid();
    // An object goes out as JSON only once its parameter's type is known, which a batch does not
    // wait for; on North's pool postgres.js then refuses it, as it does any object or Date.
    const typed = await within(
      withTenant(pool.db, tenantOf(a), async (tx) =>
        finishWith(
          tx,
          [{ text: "insert into batch_typed (doc) values ($1)", params: [{ kind: "audit" }] }],
          () => connection(tx).unsafe(TENANT_SETTING, [], EXTENDED),
        ),
      ),
      4_000,
    );
    expect(typed.state).toBe("rejected");
    expect(await pid()).toEqual(before);
    expect(await db.owner.client`select 1 from batch_typed`).toHaveLength(0);
  });

  it("a connection closed before the work's first statement never serves another tenant, nor hangs", async () => {
    const pool = onePool();
    const pidOf = async () => {
      const [row] = (await withTenant(pool.db, tenantOf(a), async (tx) =>
        finishWith(tx, [], () =>
          connection(tx).unsafe("select pg_backend_pid() as pid", [], EXTENDED),
        ),
      )) as unknown as { pid: number }[];
      return Number(row?.pid);
    };
    const known = pidOf();
    /** A call that waits before its read, as recall waits for its embeddings provider. */
    const slowRead = () =>
      withTenant(pool.db, tenantOf(a), async (tx) => {
        await sleep(600);
        return finishWith(tx, [], () => connection(tx).unsafe(TENANT_SETTING, [], EXTENDED));
      });
    // Another caller waits for the pool: the session opened again is handed to it.
    const victim = slowRead();
    victim.catch(() => {});
    await sleep(100);
    await terminate(await known);
    const other = withTenant(pool.db, tenantOf(b), async (tx) => {
      await tx.execute(tenantSetting);
      await sleep(800);
      return (await tx.execute<{ value: string }>(tenantSetting))[0]?.value;
    });
    const [va, vb] = await Promise.all([within(victim, 4_000), within(other, 4_000)]);
    expect(va.state).toBe("rejected");
    expect(vb).toEqual({ state: "resolved", value: b.organizationId });
    // Nobody waits: the call fails, and the pool serves the next caller.
    const again = await pidOf();
    const alone = slowRead();
    alone.catch(() => {});
    await sleep(100);
    await terminate(again);
    expect((await within(alone, 4_000)).state).toBe("rejected");
    expect(await within(pidOf(), 4_000)).toMatchObject({ state: "resolved" });
  });

  it("a batch whose first statement cannot be built runs nothing of the rest without its tenant", async () => {
    const rows = await tenantTable("batch_head_unbuilt");
    const pool = onePool();
    const read = (extra: unknown) =>
      pipelined(
        {
          head: [
            {
              text: "select set_config('north.organization_id', $1, true), $2::jsonb",
              params: [a.organizationId, extra],
            },
          ],
        },
        () =>
          pool.db.transaction(async (tx) => {
            adoptConnection(tx);
            return finishWith(tx, [insertInto("batch_head_unbuilt", "tail")], () =>
              connection(tx).unsafe(TENANT_SETTING, [], EXTENDED),
            );
          }),
      );
    // Warm: the head's parameter types are known, so postgres.js binds the second with Drizzle's
    // jsonb serializer, which passes the value through; a number then cannot be bound.
    expect(await within(read("{}"), 4_000)).toMatchObject({ state: "resolved" });
    expect((await within(read(5), 4_000)).state).toBe("rejected");
    await sleep(200);
    expect(await rows()).toEqual([{ a: "tail", org: a.organizationId }]);
  });

  it("a batch that leaves a transaction open fails its call and never hands the session on", async () => {
    const pool = onePool();
    const settled = await within(
      withTenant(pool.db, tenantOf(a), async (tx) =>
        finishWith(tx, [], () => connection(tx).unsafe("begin", [], EXTENDED)),
      ),
      4_000,
    );
    expect(settled.state).toBe("rejected");
    expect(await outside(pool)).toEqual({ value: "", tx: null });
  });

  it("an empty statement in a batch is answered as itself: the answers after it go where they belong", async () => {
    const pool = onePool();
    const settled = await within(
      withTenant(pool.db, tenantOf(a), async (tx) =>
        finishWith(tx, [{ text: "select $1::text as tail", params: ["tail"] }], () =>
          connection(tx).unsafe("-- nothing", [], EXTENDED),
        ),
      ),
      4_000,
    );
    expect(settled.state).toBe("resolved");
    expect(JSON.stringify(settled.state === "resolved" ? settled.value : null)).not.toContain(
      "tail",
    );
  });

  it("many concurrent reads as batches on a small pool each read their own tenant", async () => {
    const pool = connectDatabase(db.appUrl, {
      max: 3,
      closeTimeoutS: 1,
      transactionPooler: db.pooler === "transaction",
    });
    pools.push(pool);
    const tenants = Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? a : b));
    const seen = await Promise.all(
      tenants.map((w) =>
        withTenant(pool.db, tenantOf(w), async (tx) =>
          finishWith(tx, [], () => connection(tx).unsafe(TENANT_SETTING, [], EXTENDED)),
        ),
      ),
    );
    expect(seen.map((r) => (r as unknown as { value: string }[])[0]?.value)).toEqual(
      tenants.map((w) => w.organizationId),
    );
  });
});

/**
 * Attacks on the batches inside BEGIN (decision 045), from its review: BEGIN and the head go
 * without their Syncs, so a batch must never be left without the statement that ends it, and a
 * batched statement must never be held back from the one that carries its Sync.
 */
describe("attacks on batches inside BEGIN", () => {
  /** The next call on the pool: its server session and its tenant, or "hung". */
  const next = (pool: DatabaseHandle) =>
    within(
      withTenant(pool.db, tenantOf(b), async (tx) => {
        const [row] = await tx.execute<{ pid: number; value: string }>(
          sql`select pg_backend_pid() as pid, current_setting('north.organization_id', true) as value`,
        );
        return row;
      }),
      4_000,
    );
  /** The call fails, and the same server session then serves the next tenant as its own. */
  const expectFailedThenClean = async (
    pool: DatabaseHandle,
    pid: number | undefined,
    call: Promise<unknown>,
  ) => {
    expect((await within(call, 3_000)).state).toBe("rejected");
    expect(await next(pool)).toMatchObject({
      state: "resolved",
      value: { pid, value: b.organizationId },
    });
  };
  const pidOf = async (pool: DatabaseHandle) => {
    const [row] = await pool.client<{ pid: number }[]>`select pg_backend_pid() as pid`;
    return row?.pid;
  };

  it("a statement built once that a failing work's branch starts while it rolls back neither hangs the call nor the pool", async () => {
    // k: the microtasks the branch spends before its statement; some land between the work's
    // rejection and the transaction's end, where the statement is made but refused at its send.
    const outcomes: string[] = [];
    for (let k = 0; k <= 6; k++) {
      const pool = onePool();
      const failing = withTenant(pool.db, tenantOf(a), async (tx) => {
        await Promise.all([
          (async () => {
            await Promise.resolve();
            throw new Error("a sibling failed");
          })(),
          (async () => {
            for (let i = 0; i < k; i++) await Promise.resolve();
            return connection(tx).unsafe(TENANT_SETTING, [], BUILT_ONCE);
          })(),
        ]);
      });
      const settled = await within(failing, 2_000);
      const after = await next(pool);
      outcomes.push(`k=${k}: ${settled.state}, next ${after.state}`);
    }
    expect(outcomes.filter((o) => o.includes("hung"))).toEqual([]);
  });

  it("a statement built once that the work makes and never sends, before it throws, leaves nothing open", async () => {
    const pool = onePool();
    const pid = await pidOf(pool);
    const failing = withTenant(pool.db, tenantOf(a), async (tx) => {
      connection(tx).unsafe(TENANT_SETTING, [], BUILT_ONCE);
      throw new Error("the work failed before its statement was sent");
    });
    await expectFailedThenClean(pool, pid, failing);
  });

  it("a statement built once that the work sends late opens nothing before it is sent: no transaction waits without a timeout", async () => {
    const pool = onePool();
    const pid = await pidOf(pool);
    let meanwhile: unknown;
    const late = withTenant(pool.db, tenantOf(a), async (tx) => {
      const statement = connection(tx).unsafe(TENANT_SETTING, [], BUILT_ONCE);
      await sleep(300);
      [meanwhile] = await db.owner.client`
        select state, xact_start is not null as in_transaction from pg_stat_activity where pid = ${Number(pid)}`;
      return statement;
    });
    const settled = await within(late, 3_000);
    expect(settled).toMatchObject({ state: "resolved", value: [{ value: a.organizationId }] });
    // BEGIN and the tenant wait for the statement that ends their batch; sent alone, with no
    // Sync, they would hold a transaction open that no idle timeout watches.
    expect(meanwhile).toMatchObject({ state: "idle", in_transaction: false });
  });

  it("a statement built once awaited after a statement with an array value sends both, each as it can go", async () => {
    const pool = onePool();
    const settled = await within(
      withTenant(pool.db, tenantOf(a), async (tx) => {
        const first = connection(tx).unsafe(TENANT_SETTING, [], BUILT_ONCE);
        const [other] = await tx.execute<{ v: string[] }>(
          sql`select ${sql.param(["x", "y"])}::text[] as v`,
        );
        return [other?.v, (await first)[0]?.value];
      }),
      4_000,
    );
    expect(settled).toMatchObject({ state: "resolved", value: [["x", "y"], a.organizationId] });
  });

  it("a statement built once whose send is pending when another statement opens the transaction runs after the tenant", async () => {
    const pool = onePool();
    const seen = await within(
      withTenant(pool.db, tenantOf(a), async (tx) => {
        const c = connection(tx);
        // Given a callback now, so postgres.js sends it a microtask later…
        const first = c.unsafe(TENANT_SETTING, [], BUILT_ONCE);
        first.catch(() => {});
        // …after this one, not built once, has opened the transaction: BEGIN and the tenant
        // must be on the connection before either is written.
        const second = c.unsafe(TENANT_SETTING, [], EXTENDED);
        return [(await first)[0]?.value, (await second)[0]?.value];
      }),
      4_000,
    );
    expect(seen).toEqual({ state: "resolved", value: [a.organizationId, a.organizationId] });
  });

  it("a statement built once that the work cancels before it is sent is refused: neither the call nor the pool hangs", async () => {
    const pool = onePool();
    const pid = await pidOf(pool);
    const running = withTenant(pool.db, tenantOf(a), async (tx) => {
      const statement = connection(tx).unsafe(TENANT_SETTING, [], BUILT_ONCE);
      // postgres.js skips a cancelled statement at its send: BEGIN and the tenant, batched before
      // it, would wait for the Sync it was to carry.
      void statement.cancel();
      return statement;
    });
    await expectFailedThenClean(pool, pid, running);
  });

  it("a statement that the work cancels after it was written is refused: the call keeps nothing and the next tenant meets none of its answers", async () => {
    const pool = onePool();
    const rows = await tenantTable("attack_cancel_written");
    const running = withTenant(
      pool.db,
      tenantOf(a),
      async (tx) => {
        const c = connection(tx);
        await c.unsafe(TENANT_SETTING, [], BUILT_ONCE);
        c.unsafe("select pg_catalog.pg_sleep(0.3)", [], EXTENDED).catch(() => {});
        const waiting = c.unsafe("select 'of A' as value", [], EXTENDED);
        waiting.catch(() => {});
        for (let i = 0; i < 3; i++) await Promise.resolve();
        // postgres.js drops a statement it has written from its queue, while PostgreSQL still
        // answers it: every later answer would go to the statement before it.
        void waiting.cancel();
        return "done";
      },
      () => [{ text: "insert into attack_cancel_written (a) values ($1)", params: ["tail"] }],
    );
    expect((await within(running, 4_000)).state).toBe("rejected");
    expect(await rows()).toEqual([]);
    expect(await next(pool)).toMatchObject({
      state: "resolved",
      value: { value: b.organizationId },
    });
  });

  it("a batched tail behind 100 statements in flight is sent with its COMMIT: neither the call nor the pool hangs", async () => {
    const pool = onePool();
    const pid = await pidOf(pool);
    const rows = await tenantTable("attack_batch_full_100");
    const running = withTenant(
      pool.db,
      tenantOf(a),
      async (tx) => {
        const c = connection(tx);
        await c.unsafe(TENANT_SETTING, [], BUILT_ONCE);
        // postgres.js takes at most 100 statements in flight on a connection, then holds back
        // the next ones until an answer comes.
        for (let i = 0; i < 100; i++) c.unsafe("select 1", [], EXTENDED).catch(() => {});
        return "done";
      },
      () => [{ text: "insert into attack_batch_full_100 (a) values ($1)", params: ["tail"] }],
    );
    expect(await within(running, 4_000)).toMatchObject({ state: "resolved", value: "done" });
    expect(await rows()).toEqual([{ a: "tail", org: a.organizationId }]);
    expect(await next(pool)).toMatchObject({
      state: "resolved",
      value: { pid, value: b.organizationId },
    });
  });

  it("a last statement sent behind 100 statements in flight goes with its tail and COMMIT", async () => {
    const pool = onePool();
    const running = withTenant(pool.db, tenantOf(a), async (tx) => {
      const c = connection(tx);
      await c.unsafe(TENANT_SETTING, [], BUILT_ONCE);
      for (let i = 0; i < 100; i++) c.unsafe("select 1", [], BUILT_ONCE).catch(() => {});
      // Written (a query is sent a microtask after it is given a callback), not yet answered.
      for (let i = 0; i < 5; i++) await Promise.resolve();
      return finishWith(tx, [], () => c.unsafe(TENANT_SETTING, [], BUILT_ONCE));
    });
    expect(await within(running, 4_000)).toMatchObject({
      state: "resolved",
      value: [{ value: a.organizationId }],
    });
    expect((await next(pool)).state).toBe("resolved");
  });
});
