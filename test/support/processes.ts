import { type ChildProcess, execFile, spawn } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";

export const ROOT = path.resolve(import.meta.dirname, "../..");
export const CLI = path.join(ROOT, "apps/north/src/main.ts");
export const BUNDLE = path.join(ROOT, "dist/north.mjs");

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `north …` as a real process (under Bun, as `bun run north` does). */
export async function north(args: string[], env: Record<string, string>): Promise<CliResult> {
  return promisify(execFile)("bun", [CLI, ...args], {
    cwd: ROOT,
    env: { ...cleanEnv(), ...env },
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({
      code: e.code,
      stdout: e.stdout,
      stderr: e.stderr,
    }),
  );
}

/** `north … --json`, expecting success, parsed. */
export async function northJson<T = Record<string, unknown>>(
  args: string[],
  env: Record<string, string>,
): Promise<T> {
  const result = await north([...args, "--json"], env);
  if (result.code !== 0) throw new Error(`north ${args.join(" ")} failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

/** The environment without North's own variables, so a test states exactly what it sets. */
export function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (/^(DATABASE_|NORTH_|REDIS_URL|DB_APP_|DB_MAINTENANCE_)/.test(key)) continue;
    env[key] = value;
  }
  return env;
}

export interface Spawned {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the first match of `pattern` in stdout+stderr. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** SIGINT to the whole process group, then waits for exit. */
  interrupt(): Promise<number | null>;
}

export function spawnProcess(
  command: string,
  args: string[],
  env: Record<string, string>,
): Spawned {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...cleanEnv(), ...env },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (d) => {
    out += d;
  });
  child.stderr?.on("data", (d) => {
    err += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    async waitFor(pattern, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = (out + err).match(pattern);
        if (match) return match;
        if (child.exitCode !== null) throw new Error(`process exited early:\n${out}\n${err}`);
        if (Date.now() > deadline)
          throw new Error(`timed out waiting for ${pattern}:\n${out}\n${err}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async interrupt() {
      if (child.exitCode === null && child.pid) process.kill(-child.pid, "SIGINT");
      return exited;
    },
  };
}
