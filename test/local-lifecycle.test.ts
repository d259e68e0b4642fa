import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort } from "@north/db";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLI, cleanEnv, ROOT, type Spawned, spawnProcess } from "./support/processes.ts";

/**
 * SPEC §10's local database, one owner at a time (decision 024), with the real processes an
 * operator runs: `north start` (what `bun run start` runs after building) and a stdio session
 * as Claude Desktop starts it, on one `.north/`.
 */

let home: string;
let running: Array<{ kill(): void }> = [];

beforeEach(async () => {
  home = await mkdtemp(path.join(tmpdir(), "north-lifecycle-"));
  running = [];
});
afterEach(async () => {
  for (const p of running) p.kill();
  await stopLeftover();
  await rm(home, { recursive: true, force: true });
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
};

/** The postmaster's pid from `.north/pg/postmaster.pid`, if it is running. */
async function postmaster(): Promise<number | undefined> {
  const file = path.join(home, "pg", "postmaster.pid");
  if (!existsSync(file)) return undefined;
  const pid = Number((await readFile(file, "utf8")).split("\n", 1)[0]);
  return alive(pid) ? pid : undefined;
}

/** Whatever a failed test left running, so no PostgreSQL outlives the suite. */
async function stopLeftover() {
  const pid = await postmaster();
  if (pid === undefined) return;
  process.kill(pid, "SIGQUIT");
  for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
}

async function start(port: number): Promise<Spawned & { url: string }> {
  const spawned = spawnProcess("bun", [CLI, "start"], {
    NORTH_HOME: home,
    NORTH_PORT: String(port),
  });
  running.push({ kill: () => spawned.child.kill("SIGKILL") });
  const url = (await spawned.waitFor(/READY (\S+)/, 60_000))[1] ?? "";
  return { ...spawned, url };
}

/** A stdio session on the local database, as Claude Desktop runs it, initialised. */
async function stdioSession(): Promise<{
  child: ChildProcessWithoutNullStreams;
  close(): Promise<number | null>;
}> {
  const token = (await readFile(path.join(home, "token"), "utf8")).trim();
  const child = spawn("bun", [CLI, "serve", "--stdio"], {
    cwd: ROOT,
    env: { ...cleanEnv(), NORTH_HOME: home, NORTH_TOKEN: token },
  });
  running.push({ kill: () => child.kill("SIGKILL") });
  let stdout = "";
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  child.stdin.write(
    `${JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "t", version: "0" },
      },
    })}\n`,
  );
  const deadline = Date.now() + 60_000;
  while (!stdout.includes('"id":1') && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  expect(stdout).toContain('"id":1');
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return {
    child,
    // Claude Desktop ends a session by closing its stdin.
    close: async () => {
      child.stdin.end();
      return exited;
    },
  };
}

async function ready(url: string): Promise<number> {
  const response = await fetch(url.replace(/\/mcp$/, "/readyz"));
  return response.status;
}

describe("the local database's owner", () => {
  it("(a) a stdio session that started PostgreSQL leaves it running for `start`, and Ctrl-C on `start` then stops it", async () => {
    // The first process creates .north/ (and the token the stdio session signs in with).
    const bootstrap = await start(await freePort());
    expect(await bootstrap.interrupt()).toBe(0);
    expect(await postmaster()).toBeUndefined();

    const session = await stdioSession();
    const pg = await postmaster();
    expect(pg).toBeDefined();
    const server = await start(await freePort());
    expect(await postmaster()).toBe(pg);

    expect(await session.close()).toBe(0);
    // The HTTP server still has its database: the stdio session did not stop it.
    expect(await postmaster()).toBe(pg);
    expect(await ready(server.url)).toBe(200);

    expect(await server.interrupt()).toBe(0);
    expect(await postmaster()).toBeUndefined();
  }, 180_000);

  it("(a′) Ctrl-C on `start` leaves PostgreSQL to a stdio session still using it, which stops it when it ends", async () => {
    const server = await start(await freePort());
    const pg = await postmaster();
    const session = await stdioSession();
    expect(await server.interrupt()).toBe(0);
    expect(await postmaster()).toBe(pg);
    expect(await session.close()).toBe(0);
    expect(await postmaster()).toBeUndefined();
  }, 180_000);

  it("(b) a PostgreSQL left by a killed `start` is adopted with a warning, and the next Ctrl-C stops it", async () => {
    const port = await freePort();
    const first = await start(port);
    const pg = await postmaster();
    expect(pg).toBeDefined();
    first.child.kill("SIGKILL");
    await new Promise((r) => first.child.once("exit", r));
    // Killed outright, it could not stop its PostgreSQL.
    expect(await postmaster()).toBe(pg);

    const second = await start(port);
    expect(second.stderr()).toContain(
      `north: PostgreSQL (pid ${pg}) was left running under ${path.join(home, "pg")} by a North process that is gone`,
    );
    expect(await ready(second.url)).toBe(200);
    expect(await second.interrupt()).toBe(0);
    expect(await postmaster()).toBeUndefined();
  }, 180_000);
});
