/**
 * Running vitest for scripts/try-mutations.ts: one run of the README's test command on some
 * suites, with vitest's JSON report, stopped cleanly (its embedded PostgreSQL with it) on a
 * timeout or a signal.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import type { Check } from "../test/support/catalogue.ts";

const ROOT = path.resolve(import.meta.dirname, "..");
const WORK = path.join(ROOT, ".tmp", "try-mutations");
/** One check's run: its own embedded PostgreSQL, migrated and provisioned, then one test. */
const RUN_TIMEOUT_MS = 300_000;
/** The unmutated run of every listed suite, which takes longer than any one check. */
export const BASELINE_TIMEOUT_MS = 45 * 60_000;

let child: ChildProcess | undefined;
/** Set by a signal: restore, stop vitest, exit. */
let leaving = false;

/** A signal arrived: no run resolves from now on. */
export function leave(): boolean {
  const already = leaving;
  leaving = true;
  return already;
}

/**
 * Stops the running vitest, if any. SIGTERM goes to `bun run` alone, which passes it on: vitest
 * then closes the embedded PostgreSQL's stdin and the server stops and removes its data. (A
 * signal to the whole group would also hit PostgreSQL and leave its data directory behind.)
 * Whatever is left after 15 s is killed, group and all.
 */
export async function stopChild(): Promise<void> {
  const proc = child;
  if (proc?.pid === undefined || proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => proc.once("close", () => resolve()));
  proc.kill("SIGTERM");
  const timeout = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), 15_000));
  if ((await Promise.race([exited, timeout])) === "timeout") {
    try {
      process.kill(-proc.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

export interface ReportedTest {
  fullName: string;
  status: string;
  location?: { line: number; column: number };
  failureMessages?: string[];
}

export interface VitestRun {
  code: number | null;
  timedOut: boolean;
  output: string;
  /** Tests of the report, by absolute file path; undefined when vitest wrote no report. */
  report: Map<string, ReportedTest[]> | undefined;
}

/** `bun run test <files> [-t pattern]` with the JSON reporter; resolves when it exits. */
export function runVitest(
  files: readonly string[],
  extra: readonly string[],
  reportName: string,
  timeoutMs = RUN_TIMEOUT_MS,
): Promise<VitestRun> {
  mkdirSync(WORK, { recursive: true });
  const reportFile = path.join(WORK, `${reportName}.json`);
  rmSync(reportFile, { force: true });
  const env: NodeJS.ProcessEnv = { ...process.env, CI: "1" };
  delete env.DATABASE_URL;
  const args = [
    "run",
    "test",
    ...files,
    ...extra,
    "--reporter=default",
    "--reporter=json",
    `--outputFile.json=${reportFile}`,
  ];
  return new Promise((resolve, reject) => {
    const proc = spawn("bun", args, { cwd: ROOT, env, detached: true });
    child = proc;
    let output = "";
    proc.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    proc.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      void stopChild();
    }, timeoutMs);
    proc.on("error", reject);
    proc.on("close", (code) => {
      clearTimeout(timer);
      child = undefined;
      // Interrupted: the signal handler exits once vitest is down; nothing more is reported.
      if (leaving) return;
      resolve({ code, timedOut, output, report: readReport(reportFile) });
    });
  });
}

function readReport(file: string): Map<string, ReportedTest[]> | undefined {
  if (!existsSync(file)) return undefined;
  const json = JSON.parse(readFileSync(file, "utf8")) as {
    testResults: { name: string; assertionResults: ReportedTest[] }[];
  };
  return new Map(json.testResults.map((r) => [r.name, r.assertionResults]));
}

export function testsOf(run: VitestRun, check: Check): ReportedTest[] {
  const tests = run.report?.get(path.join(ROOT, check.file)) ?? [];
  return tests.filter((t) => t.fullName === check.name);
}

/** vitest's -t is a regular expression over the full name (describe titles + test title). */
export function exactName(name: string): string {
  return `^${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`;
}

export function tail(text: string, lines = 40): string {
  return text.trimEnd().split("\n").slice(-lines).join("\n");
}
