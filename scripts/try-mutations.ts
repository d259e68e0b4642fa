/**
 * `bun run test:acceptance-mutations`: tries, one at a time, the mutation that
 * scripts/acceptance-mutations.ts names for each check of the acceptance and integration suites,
 * and proves it turns that check red — by exit code, with vitest's JSON report saying which test
 * failed, never by grepping output.
 *
 * For each entry: every `find` must occur exactly once where its edit anchors it (its file, its
 * declaration `in`, or the whole product: mutation-anchor.ts; otherwise the entry is a catalogue
 * error: the code changed and the catalogue must follow); the replacement is
 * written, only that check runs (`bun run test <file> -t "^<exact name>$"`), the run must exit
 * non-zero with that check failed, and the file is restored and compared byte for byte with its
 * original. Restoring happens in `finally`, on SIGINT/SIGTERM/SIGHUP, at exit, and — after a
 * SIGKILL — at the next start, from a journal in .tmp/.
 *
 * Before the entries, one unmutated run of the suites must pass and must contain every named
 * check; a full run also fails for any check (one `it`, or one `it.each`) with neither a
 * mutation nor a listed reason. Runs always use a disposable embedded PostgreSQL: some mutations
 * change cluster-wide roles, so `DATABASE_URL` is ignored. `CI=1` keeps vitest from writing
 * snapshots.
 *
 * Options:
 *   --only <substring>   only entries whose check file, check name or mutated file contains it
 *                        (repeatable: any of them)
 *   --check-isolation    first run each selected check alone, unmutated, and require it to pass
 *                        (finds checks that only pass after another test; doubles the time)
 *   --write-doc          regenerate the per-check table in docs/acceptance.md (whole catalogue)
 *   --dry-run            only check that every `find` occurs exactly once; run nothing
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import path from "node:path";
import {
  type Check,
  type Edit,
  type Entry,
  MUTATIONS,
  NO_MUTATION,
  SUITES,
} from "./acceptance-mutations.ts";
import { locate } from "./mutation-anchor.ts";

const ROOT = path.resolve(import.meta.dirname, "..");
const WORK = path.join(ROOT, ".tmp", "try-mutations");
const JOURNAL = path.join(WORK, "journal.json");
const DOC = path.join(ROOT, "docs", "acceptance.md");
const DOC_BEGIN = "<!-- try-mutations:begin -->";
const DOC_END = "<!-- try-mutations:end -->";
const RUN_TIMEOUT_MS = 300_000;

// ---------------------------------------------------------------------------------------------
// Options

function parseArgs(argv: readonly string[]) {
  const options = {
    only: [] as string[],
    isolation: false,
    writeDoc: false,
    dryRun: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--only") {
      const substring = argv[++i];
      if (!substring) usage("--only needs a substring");
      options.only.push(substring);
    } else if (arg === "--check-isolation") options.isolation = true;
    else if (arg === "--write-doc") options.writeDoc = true;
    else if (arg === "--dry-run") options.dryRun = true;
    else usage(`unknown argument ${arg}`);
  }
  if (options.writeDoc && options.only.length > 0) {
    usage("--write-doc regenerates the table from a run of the whole catalogue; drop --only");
  }
  return options;
}

function usage(problem: string): never {
  process.stderr.write(
    `${problem}\nusage: bun run test:acceptance-mutations [--only <substring>] [--check-isolation] [--write-doc] [--dry-run]\n`,
  );
  process.exit(2);
}

// ---------------------------------------------------------------------------------------------
// Mutating and restoring files, with a journal that survives a SIGKILL

interface Mutated {
  file: string;
  original: Buffer;
  mutated: Buffer;
}

/** Files currently holding a mutation; restored by every exit path. */
let mutated: Mutated[] = [];

function writeJournal() {
  mkdirSync(WORK, { recursive: true });
  const entries = mutated.map((m) => ({
    file: m.file,
    original: m.original.toString("base64"),
    mutated: m.mutated.toString("base64"),
  }));
  writeFileSync(JOURNAL, JSON.stringify(entries));
}

/** Puts every mutated file back and checks it byte for byte; throws if one does not match. */
function restoreAll(): void {
  const problems: string[] = [];
  for (const m of mutated) {
    const absolute = path.join(ROOT, m.file);
    writeFileSync(absolute, m.original);
    if (!readFileSync(absolute).equals(m.original)) problems.push(m.file);
  }
  mutated = [];
  if (problems.length > 0) {
    throw new Error(`restored content differs from the original in ${problems.join(", ")}`);
  }
  rmSync(JOURNAL, { force: true });
}

/** After a SIGKILL: puts back what the journal holds, if the files still hold the mutation. */
function recoverFromJournal(): void {
  if (!existsSync(JOURNAL)) return;
  const entries = JSON.parse(readFileSync(JOURNAL, "utf8")) as {
    file: string;
    original: string;
    mutated: string;
  }[];
  for (const entry of entries) {
    const absolute = path.join(ROOT, entry.file);
    const current = readFileSync(absolute);
    const original = Buffer.from(entry.original, "base64");
    if (current.equals(original)) continue;
    if (!current.equals(Buffer.from(entry.mutated, "base64"))) {
      process.stderr.write(
        `${entry.file} holds neither its original nor the mutation an interrupted run left in ${path.relative(ROOT, JOURNAL)}; fix it by hand, then delete the journal.\n`,
      );
      process.exit(2);
    }
    writeFileSync(absolute, original);
    process.stdout.write(`restored ${entry.file}, left mutated by an interrupted run\n`);
  }
  rmSync(JOURNAL, { force: true });
}

/**
 * The files an entry's edits produce, applied in order in memory, or the reason the catalogue is
 * wrong: a `find` missing or ambiguous (mutation-anchor.ts says where it looks), or a
 * replacement that changes nothing.
 */
function planEdits(edits: readonly Edit[]): Mutated[] | string {
  const contents = new Map<string, { original: Buffer; text: string }>();
  const read = (file: string) => {
    let state = contents.get(file);
    if (!state) {
      const original = readFileSync(path.join(ROOT, file));
      state = { original, text: original.toString("utf8") };
      contents.set(file, state);
    }
    return state.text;
  };
  const touched = new Set<string>();
  for (const edit of edits) {
    const at = locate(ROOT, edit, read);
    if (typeof at === "string") return at;
    const state = contents.get(at.file);
    if (!state) return `${at.file} was not read`;
    if (state.text.slice(at.start, at.end) === edit.replace) {
      return `find and replace are identical in ${at.file}`;
    }
    state.text = state.text.slice(0, at.start) + edit.replace + state.text.slice(at.end);
    touched.add(at.file);
  }
  return [...touched].map((file) => {
    const state = contents.get(file) as { original: Buffer; text: string };
    return { file, original: state.original, mutated: Buffer.from(state.text, "utf8") };
  });
}

/** Writes an entry's edits (journal first); returns the catalogue problem instead, if any. */
function applyEdits(edits: readonly Edit[]): string | undefined {
  const plan = planEdits(edits);
  if (typeof plan === "string") return plan;
  mutated = plan;
  writeJournal();
  for (const m of mutated) writeFileSync(path.join(ROOT, m.file), m.mutated);
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Running vitest

let child: ChildProcess | undefined;
/** Set by a signal: restore, stop vitest, exit. */
let leaving = false;

/**
 * Stops the running vitest, if any. SIGTERM goes to `bun run` alone, which passes it on: vitest
 * then closes the embedded PostgreSQL's stdin and the server stops and removes its data. (A
 * signal to the whole group would also hit PostgreSQL and leave its data directory behind.)
 * Whatever is left after 15 s is killed, group and all.
 */
async function stopChild(): Promise<void> {
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

interface ReportedTest {
  fullName: string;
  status: string;
  location?: { line: number; column: number };
  failureMessages?: string[];
}

interface VitestRun {
  code: number | null;
  timedOut: boolean;
  output: string;
  /** Tests of the report, by absolute file path; undefined when vitest wrote no report. */
  report: Map<string, ReportedTest[]> | undefined;
}

/** `bun run test <files> [-t pattern]` with the JSON reporter; resolves when it exits. */
function runVitest(
  files: readonly string[],
  extra: readonly string[],
  reportName: string,
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
    }, RUN_TIMEOUT_MS);
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

function testsOf(run: VitestRun, check: Check): ReportedTest[] {
  const tests = run.report?.get(path.join(ROOT, check.file)) ?? [];
  return tests.filter((t) => t.fullName === check.name);
}

/** vitest's -t is a regular expression over the full name (describe titles + test title). */
function exactName(name: string): string {
  return `^${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`;
}

function tail(text: string, lines = 40): string {
  return text.trimEnd().split("\n").slice(-lines).join("\n");
}

// ---------------------------------------------------------------------------------------------
// The run

type Result =
  | { kind: "killed"; seconds: number }
  | { kind: "survived"; seconds: number }
  | { kind: "error"; reason: string; seconds?: number };

const label = (c: Check) => `${c.file} › ${c.name}`;

async function tryEntry(entry: Entry): Promise<Result> {
  const edits: Edit[] = [entry.mutation, ...(entry.mutation.also ?? [])];
  const problem = applyEdits(edits);
  if (problem) return { kind: "error", reason: problem };
  const started = performance.now();
  let run: VitestRun;
  try {
    run = await runVitest([entry.check.file], ["-t", exactName(entry.check.name)], "entry");
  } finally {
    restoreAll();
  }
  const seconds = (performance.now() - started) / 1000;
  if (run.timedOut) return { kind: "error", reason: "the run timed out", seconds };
  const [test, ...others] = testsOf(run, entry.check);
  if (run.code === 0) {
    return test?.status === "passed"
      ? { kind: "survived", seconds }
      : { kind: "error", reason: "exit 0 but the check did not run", seconds };
  }
  if (!test || others.length > 0) {
    return {
      kind: "error",
      reason: `exit ${run.code} but the report has ${test ? "several" : "no"} test(s) of that name — the mutation breaks the file or its setup, not this check\n${tail(run.output)}`,
      seconds,
    };
  }
  if (test.status !== "failed") {
    return {
      kind: "error",
      reason: `exit ${run.code} but the check itself ${test.status} — the mutation breaks something else\n${tail(run.output)}`,
      seconds,
    };
  }
  return { kind: "killed", seconds };
}

/** The `it`s (one per source location, so an `it.each` is one check) of the suites' report. */
function checksOf(run: VitestRun, files: readonly string[]) {
  const checks: { file: string; line: number; names: string[] }[] = [];
  for (const file of files) {
    const byLine = new Map<number, string[]>();
    for (const test of run.report?.get(path.join(ROOT, file)) ?? []) {
      const line = test.location?.line ?? -1;
      byLine.set(line, [...(byLine.get(line) ?? []), test.fullName]);
    }
    for (const [line, names] of [...byLine].sort((a, b) => a[0] - b[0])) {
      checks.push({ file, line, names });
    }
  }
  return checks;
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  recoverFromJournal();

  const matches = (entry: { check: Check; mutation?: Edit }) =>
    options.only.length === 0 ||
    [entry.check.file, entry.check.name, entry.mutation?.file ?? ""].some((s) =>
      options.only.some((only) => s.includes(only)),
    );
  const entries = MUTATIONS.filter(matches);
  const noMutation = NO_MUTATION.filter(matches);
  if (entries.length === 0) usage(`no catalogue entry matches ${options.only.join(" or ")}`);
  const full = options.only.length === 0;
  if (options.dryRun) {
    let bad = 0;
    for (const entry of entries) {
      const plan = planEdits([entry.mutation, ...(entry.mutation.also ?? [])]);
      if (typeof plan !== "string") continue;
      bad++;
      process.stdout.write(`catalogue error  ${label(entry.check)}: ${plan}\n`);
    }
    process.stdout.write(`${entries.length - bad} passed, ${bad} failed\n`);
    process.exit(bad === 0 ? 0 : 1);
  }
  const startedAt = new Date();
  const started = performance.now();
  const failures: string[] = [];
  const results = new Map<Entry, Result>();

  // 1. One unmutated run: green, and holding every named check exactly once.
  const files = full
    ? [...SUITES]
    : [...new Set([...entries, ...noMutation].map((e) => e.check.file))];
  process.stdout.write(`baseline: ${files.length} suite file(s), unmutated\n`);
  const baseline = await runVitest(files, ["--includeTaskLocation"], "baseline");
  if (baseline.code !== 0) {
    process.stdout.write(`${tail(baseline.output, 80)}\n`);
    process.stdout.write(`baseline failed (exit ${baseline.code}): nothing was tried\n`);
    process.stdout.write(`0 passed, ${entries.length} failed\n`);
    process.exit(1);
  }
  const usable: Entry[] = [];
  for (const entry of [...entries, ...noMutation]) {
    const found = testsOf(baseline, entry.check);
    if (found.length === 1 && found[0]?.status === "passed") {
      if ("mutation" in entry) usable.push(entry);
      continue;
    }
    const reason = `names ${found.length} passing test(s) in the unmutated run (must be exactly one)`;
    process.stdout.write(`catalogue error  ${label(entry.check)}: ${reason}\n`);
    failures.push(label(entry.check));
    if ("mutation" in entry) results.set(entry, { kind: "error", reason });
  }
  if (full) {
    const named = new Set([...MUTATIONS, ...NO_MUTATION].map((e) => label(e.check)));
    for (const check of checksOf(baseline, SUITES)) {
      if (check.names.some((name) => named.has(label({ file: check.file, name })))) continue;
      const shown = `${check.file}:${check.line} › ${check.names[0]}`;
      process.stdout.write(`catalogue error  ${shown}: no mutation and no reason listed\n`);
      failures.push(shown);
    }
  }

  // 2. Optionally, each check alone and unmutated must pass (no dependence on another test).
  if (options.isolation) {
    for (const entry of usable) {
      const alone = await runVitest(
        [entry.check.file],
        ["-t", exactName(entry.check.name)],
        "alone",
      );
      const [test] = testsOf(alone, entry.check);
      if (alone.code === 0 && test?.status === "passed") continue;
      process.stdout.write(
        `catalogue error  ${label(entry.check)}: fails alone, unmutated (exit ${alone.code})\n${tail(alone.output)}\n`,
      );
      failures.push(label(entry.check));
      results.set(entry, { kind: "error", reason: "fails alone, unmutated" });
    }
  }

  // 3. The mutations.
  let killed = 0;
  for (const entry of entries) {
    if (!usable.includes(entry) || results.has(entry)) continue;
    const result = await tryEntry(entry);
    results.set(entry, result);
    const time = result.seconds === undefined ? "" : ` (${result.seconds.toFixed(1)} s)`;
    const target = `${label(entry.check)}  ← ${entry.mutation.file}: ${entry.mutation.why}`;
    if (result.kind === "killed") {
      killed++;
      process.stdout.write(`killed           ${target}${time}\n`);
    } else if (result.kind === "survived") {
      failures.push(label(entry.check));
      process.stdout.write(`SURVIVED         ${target}${time}\n`);
    } else {
      failures.push(label(entry.check));
      process.stdout.write(`catalogue error  ${target}${time}\n  ${result.reason}\n`);
    }
  }

  const elapsed = (performance.now() - started) / 1000;
  if (options.writeDoc)
    writeDoc(results, baseline, { startedAt, elapsed, isolation: options.isolation });
  process.stdout.write(
    `took ${formatDuration(elapsed)}; ${noMutation.length} check(s) listed without a mutation\n`,
  );
  process.stdout.write(`${killed} passed, ${failures.length} failed\n`);
  process.exit(failures.length === 0 ? 0 : 1);
}

// ---------------------------------------------------------------------------------------------
// docs/acceptance.md

function formatDuration(seconds: number): string {
  const m = Math.floor(seconds / 60);
  const s = Math.round(seconds % 60);
  return m > 0 ? `${m} min ${s} s` : `${s} s`;
}

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

function writeDoc(
  results: Map<Entry, Result>,
  baseline: VitestRun,
  run: { startedAt: Date; elapsed: number; isolation: boolean },
) {
  const { startedAt, elapsed } = run;
  const lineOf = (check: Check) => testsOf(baseline, check)[0]?.location?.line ?? 0;
  const date = startedAt.toISOString().slice(0, 10);
  const outcome = (r: Result | undefined) =>
    r === undefined
      ? "not run"
      : r.kind === "killed"
        ? `killed (tried ${date})`
        : r.kind === "survived"
          ? `**SURVIVED** (tried ${date})`
          : `**catalogue error** (${date})`;
  const killed = [...results.values()].filter((r) => r.kind === "killed").length;
  const rows = [
    ...MUTATIONS.map((e) => {
      const also = e.mutation.also ?? [];
      const where = [e.mutation.file, ...also.map((a) => a.file)]
        .filter((f, i, all) => all.indexOf(f) === i)
        .map((f) => `\`${f}\``)
        .join(" + ");
      return {
        check: e.check,
        mutation: `${where}: ${e.mutation.why}`,
        result: outcome(results.get(e)),
      };
    }),
    ...NO_MUTATION.map((e) => ({
      check: e.check,
      mutation: `none: ${e.reason}`,
      result: "no product mutation",
    })),
  ].sort(
    (a, b) =>
      SUITES.indexOf(a.check.file) - SUITES.indexOf(b.check.file) ||
      lineOf(a.check) - lineOf(b.check),
  );
  const table = [
    "| test file | check | mutation (file: why) | result |",
    "| --- | --- | --- | --- |",
    ...rows.map(
      (r) => `| \`${r.check.file}\` | ${cell(r.check.name)} | ${cell(r.mutation)} | ${r.result} |`,
    ),
  ];
  const section = [
    DOC_BEGIN,
    "<!-- Generated by `bun run test:acceptance-mutations --write-doc`; edit scripts/acceptance-mutations.ts, not this table. -->",
    "",
    `Last full run: ${date}, ${MUTATIONS.length} mutations tried, ${killed} killed, ${NO_MUTATION.length} check(s) without a mutation; ${formatDuration(elapsed)} on ${availableParallelism()} cores (one vitest run with its own embedded PostgreSQL per entry, one at a time)${run.isolation ? "; with `--check-isolation`, so every check also passed alone, unmutated, first" : ""}.`,
    "",
    ...table,
    DOC_END,
  ].join("\n");
  const doc = readFileSync(DOC, "utf8");
  const begin = doc.indexOf(DOC_BEGIN);
  const end = doc.indexOf(DOC_END);
  const next =
    begin !== -1 && end > begin
      ? doc.slice(0, begin) + section + doc.slice(end + DOC_END.length)
      : `${doc.trimEnd()}\n\n${section}\n`;
  writeFileSync(DOC, next);
  // The repository's formatter owns markdown tables' alignment; `bun run lint` checks it.
  const biome = spawnSync(
    path.join(ROOT, "node_modules", ".bin", "biome"),
    ["format", "--write", DOC],
    {
      cwd: ROOT,
      encoding: "utf8",
    },
  );
  if (biome.status !== 0) process.stdout.write(`biome format failed:\n${biome.stderr}\n`);
  process.stdout.write(`wrote the per-check table to ${path.relative(ROOT, DOC)}\n`);
}

// ---------------------------------------------------------------------------------------------
// Signals: restore first, then stop vitest, then leave.

for (const [signal, code] of [
  ["SIGINT", 130],
  ["SIGTERM", 143],
  ["SIGHUP", 129],
] as const) {
  process.on(signal, () => {
    if (leaving) return;
    leaving = true;
    let restored = true;
    try {
      restoreAll();
    } catch (error) {
      restored = false;
      process.stderr.write(`${(error as Error).message}\n`);
    }
    process.stdout.write(
      `\ninterrupted by ${signal}; ${restored ? "every mutated file is restored" : "RESTORE FAILED"}; stopping vitest\n`,
    );
    void stopChild().finally(() => process.exit(code));
  });
}
process.on("exit", () => {
  if (mutated.length > 0) restoreAll();
});

await main();
