import type { ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SAVE_TOOL } from "@north/agent-runtime";
import { freePort } from "@north/db";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from "vitest";
import { CLI, type Spawned, spawnProcess } from "../support/processes.ts";
import {
  type RestartablePostgres,
  startRestartablePostgres,
} from "../support/restartable-postgres.ts";
import {
  connectClient,
  mintMemberTokens,
  type ServeProcess,
  spawnServe,
} from "../support/serve-process.ts";

/**
 * SPEC §10, SIGTERM: stop accepting, finish the calls in flight (bounded drain), close the pool,
 * exit 0 — with the real processes. Calls are held in flight by a table lock the test takes as
 * the owner, so "in flight" is a fact, not a race. And issue 14's case (c): a server that lived
 * through a PostgreSQL restart under load exits promptly on SIGTERM, and a second signal ends a
 * shutdown that is still draining at once.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves with the exit code (or the signal that killed it) and when it came. */
function exitOf(child: ChildProcess) {
  return new Promise<{ code: number | null; signal: string | null; at: number }>((resolve) => {
    if (child.exitCode !== null) resolve({ code: child.exitCode, signal: null, at: Date.now() });
    else child.once("exit", (code, signal) => resolve({ code, signal, at: Date.now() }));
  });
}

/** State and process group of a process, from /proc (Linux), or undefined once it is gone. */
function procStat(pid: number): { state: string; group: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0] ?? "", group: Number(fields[2]) };
  } catch {
    return undefined;
  }
}

/**
 * Whether a process still runs. A zombie has exited: it only waits for PID 1 (which, in a
 * container, may take its time) to collect its exit status.
 */
function alive(pid: number): boolean {
  const stat = procStat(pid);
  return stat !== undefined && stat.state !== "Z";
}

/** Whether any live process remains in a process group. */
function groupAlive(group: number): boolean {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .some((name) => {
      const stat = procStat(Number(name));
      return stat?.group === group && stat.state !== "Z";
    });
}

/**
 * Takes a SHARE lock on the working-profile table as the owner: every save waits on it. Resolves
 * once `waiting` of North's sessions are blocked on it; `release` commits the lock away.
 */
async function holdSaves(ownerUrl: string, waiting: number, start: () => void) {
  const owner = postgres(ownerUrl, { max: 2, onnotice: () => {} });
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let locked: () => void = () => {};
  const isLocked = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const holding = owner
    .begin(async (tx) => {
      await tx`lock table working_profile_answers in share mode`;
      locked();
      await released;
    })
    .catch((error: Error) => error);
  await isLocked;
  start();
  const deadline = Date.now() + 15_000;
  for (;;) {
    const [row] = await owner<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity
      where application_name = 'north' and wait_event_type = 'Lock'`;
    if ((row?.n ?? 0) >= waiting) break;
    if (Date.now() > deadline) throw new Error(`only ${row?.n} saves are waiting on the lock`);
    await sleep(50);
  }
  return {
    async release() {
      release();
      await holding;
      await owner.end({ timeout: 5 });
    },
  };
}

const save = (client: Client, writer: number, step: number) =>
  client.callTool(
    {
      name: SAVE_TOOL,
      arguments: {
        question: `Writer ${writer}: how do you open matter ${step}?`,
        answer: `Step ${step} of writer ${writer}`,
      },
    },
    undefined,
    { timeout: 30_000 },
  );

describe("SIGTERM on bun run start with calls in flight", () => {
  let home: string;
  let server: Spawned | undefined;

  beforeAll(async () => {
    home = await mkdtemp(path.join(tmpdir(), "north-drain-"));
  });
  afterAll(async () => {
    if (server?.child.pid && alive(server.child.pid)) process.kill(-server.child.pid, "SIGKILL");
    await rm(home, { recursive: true, force: true });
  });

  it("finishes every call in flight, stops its PostgreSQL and exits 0", async () => {
    server = spawnProcess("bun", [CLI, "start", "--port", String(await freePort())], {
      NORTH_HOME: home,
      NORTH_PURGE_INTERVAL_S: "0",
      NORTH_WRITES_PER_MINUTE: "100000",
      NORTH_DRAIN_TIMEOUT_MS: "20000",
      NORTH_STATEMENT_TIMEOUT_MS: "20000",
    });
    const spawned = server;
    onTestFailed(() => console.log(spawned.stdout(), spawned.stderr()));
    const url = (await spawned.waitFor(/READY (http\S+)/, 120_000))[1] ?? "";
    const state = JSON.parse(await readFile(path.join(home, "local.json"), "utf8")) as {
      port: number;
      superuserPassword: string;
    };
    const ownerUrl = `postgres://postgres:${encodeURIComponent(state.superuserPassword)}@127.0.0.1:${state.port}/postgres`;
    const postmaster = Number(
      (await readFile(path.join(home, "pg", "postmaster.pid"), "utf8")).split("\n")[0],
    );
    expect(alive(postmaster)).toBe(true);
    // Eight members in workspaces of their own, so the per-workspace gate admits every call.
    const tokens = await mintMemberTokens(ownerUrl, 8);
    const clients = await Promise.all(tokens.map(({ token }) => connectClient(url, token)));

    let calls: Promise<Awaited<ReturnType<typeof save>> | Error>[] = [];
    const lock = await holdSaves(ownerUrl, 8, () => {
      calls = clients.map((client, i) => save(client, i, 0).catch((error: Error) => error));
    });
    const pid = spawned.child.pid ?? 0;
    const exited = exitOf(spawned.child);
    const sentAt = Date.now();
    process.kill(pid, "SIGTERM");
    await spawned.waitFor(/draining calls in flight/, 5_000);
    // No new connection is accepted while the eight calls drain.
    const late = await fetch(`${url.replace(/\/mcp$/, "")}/healthz`).then(
      (r) => r.status,
      () => "refused",
    );
    expect(late).not.toBe(200);
    await sleep(500);
    expect(alive(pid)).toBe(true);
    await lock.release();

    const results = await Promise.all(calls);
    for (const result of results) {
      expect(result).not.toBeInstanceOf(Error);
      expect(result).toMatchObject({ structuredContent: { outcome: "created" } });
    }
    const { code, at } = await exited;
    expect(code).toBe(0);
    expect(at - sentAt).toBeLessThan(15_000);
    // Nothing is left: not the server, not anything in its process group, not its PostgreSQL
    // (which runs in a session of its own).
    await sleep(200);
    expect(alive(pid)).toBe(false);
    expect(alive(postmaster)).toBe(false);
    expect(groupAlive(pid)).toBe(false);
    expect(existsSync(path.join(home, "pg", "postmaster.pid"))).toBe(false);
    for (const client of clients) await client.close().catch(() => {});
  }, 180_000);
});

describe("north serve after a PostgreSQL restart under load (issue 14, case c)", () => {
  let pg: RestartablePostgres;
  let tokens: { organizationId: string; token: string }[];
  const servers: ServeProcess[] = [];

  beforeAll(async () => {
    pg = await startRestartablePostgres();
    tokens = await mintMemberTokens(pg.ownerUrl, 8);
  }, 180_000);
  afterAll(async () => {
    for (const server of servers) {
      if (server.child.pid && alive(server.child.pid)) process.kill(-server.child.pid, "SIGKILL");
    }
    await pg?.close();
  });

  /**
   * A fresh `north serve`, eight writers saving through a stop and a start of PostgreSQL, until
   * each has been answered again after the restart. Returns the server and its clients.
   */
  async function serveThroughRestart(env: Record<string, string> = {}) {
    const server = await spawnServe(pg.appUrl, env);
    servers.push(server);
    onTestFailed(() => console.log(server.stdout(), server.stderr()));
    const clients = await Promise.all(tokens.map(({ token }) => connectClient(server.url, token)));
    let phase: "before" | "down" | "after" | "done" = "before";
    const answeredAfter = new Set<number>();
    const writers = clients.map(async (client, i) => {
      for (let step = 0; phase !== "done" && step < 500; step++) {
        const result = await save(client, i, step + servers.length * 1000);
        if (phase === "after" && !result.isError) answeredAfter.add(i);
        if (result.isError) await sleep(50);
      }
    });
    await sleep(500);
    phase = "down";
    await pg.stop();
    await sleep(1_000);
    await pg.start();
    phase = "after";
    const deadline = Date.now() + 15_000;
    while (answeredAfter.size < clients.length && Date.now() < deadline) await sleep(50);
    phase = "done";
    await Promise.all(writers);
    expect(answeredAfter.size).toBe(clients.length);
    return { server, clients };
  }

  it("exits 0 promptly on SIGTERM", async () => {
    const { server, clients } = await serveThroughRestart();
    const exited = exitOf(server.child);
    const sentAt = Date.now();
    process.kill(server.child.pid ?? 0, "SIGTERM");
    const { code, at } = await exited;
    expect(code).toBe(0);
    expect(at - sentAt).toBeLessThan(3_000);
    expect(groupAlive(server.child.pid ?? 0)).toBe(false);
    for (const client of clients) await client.close().catch(() => {});
  }, 120_000);

  it("exits at once on a second signal while calls in flight are still draining", async () => {
    const { server, clients } = await serveThroughRestart({
      NORTH_DRAIN_TIMEOUT_MS: "60000",
      NORTH_STATEMENT_TIMEOUT_MS: "60000",
    });
    const first = clients[0] as Client;
    let call: Promise<unknown> = Promise.resolve();
    const lock = await holdSaves(pg.ownerUrl, 1, () => {
      call = save(first, 0, 99_999).catch((error: Error) => error);
    });
    try {
      const exited = exitOf(server.child);
      process.kill(server.child.pid ?? 0, "SIGTERM");
      await server.waitFor(/draining calls in flight/, 5_000);
      // Past the echo window (a repeat within 0.5 s is the same Ctrl-C, decision 022).
      await sleep(1_000);
      expect(server.child.exitCode).toBeNull();
      const sentAt = Date.now();
      process.kill(server.child.pid ?? 0, "SIGINT");
      const { code, at } = await exited;
      expect(at - sentAt).toBeLessThan(1_000);
      // 130: the shell's code for SIGINT; a forced exit is not a clean one.
      expect(code).toBe(130);
      expect(groupAlive(server.child.pid ?? 0)).toBe(false);
    } finally {
      await lock.release();
      await call;
      for (const client of clients) await client.close().catch(() => {});
    }
  }, 120_000);
});
