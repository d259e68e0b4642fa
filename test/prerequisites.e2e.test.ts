import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * SPEC §10, two commands on a fresh machine: `bun run test` checks the Debian packages it needs
 * first (scripts/test-prerequisites.ts). Here a machine without PgBouncer, as a user who cannot
 * install it: the run stops at once with one line naming the command to run.
 */
const ROOT = path.join(import.meta.dirname, "..");
const SCRIPT = path.join(ROOT, "scripts/test-prerequisites.ts");

const check = (env: Record<string, string>, options: { uid?: number } = {}) =>
  spawnSync("bun", [SCRIPT], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: "/tmp", ...env },
    encoding: "utf8",
    timeout: 30_000,
    ...options,
  });

const asRoot = process.getuid?.() === 0;

describe("bun run test's prerequisites", () => {
  it("passes at once when every package is there", () => {
    const result = check({});
    expect(result.status).toBe(0);
    expect(result.stderr).toBe("");
  });

  it("on a machine without PgBouncer, as a user who cannot install it, stops with one line naming the command", () => {
    // As `nobody`, who cannot run apt-get; the binary the suites would start is not there.
    const result = check({ PGBOUNCER_BIN: "/nonexistent/pgbouncer" }, asRoot ? { uid: 65534 } : {});
    expect(result.status).toBe(1);
    const lines = result.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("apt-get install -y pgbouncer");
    expect(lines[0]).not.toMatch(/redis-server|chromium/);
    expect(result.stdout).toBe("");
  });

  it("names every missing package in that one line, and only those", () => {
    const result = check(
      { PGBOUNCER_BIN: "/nonexistent/pgbouncer", CHROMIUM_PATH: "/nonexistent/chromium" },
      asRoot ? { uid: 65534 } : {},
    );
    expect(result.status).toBe(1);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toContain("apt-get install -y chromium pgbouncer");
  });
});
