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
 *   --update-doc         with --only: rewrite the result of the entries tried in that table, and
 *                        keep every other row's result from the last full run (a row whose
 *                        mutation changed since then reads "not run")
 *   --dry-run            only check that every `find` occurs exactly once; run nothing
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
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
import {
  applyEdits,
  holdsMutation,
  placeOf,
  planEdits,
  recoverFromJournal,
  restoreAll,
} from "./mutation-edits.ts";
import {
  BASELINE_TIMEOUT_MS,
  exactName,
  leave,
  runVitest,
  stopChild,
  tail,
  testsOf,
  type VitestRun,
} from "./mutation-runs.ts";

const ROOT = path.resolve(import.meta.dirname, "..");
const _WORK = path.join(ROOT, ".tmp", "try-mutations");
const DOC = path.join(ROOT, "docs", "acceptance.md");
const DOC_BEGIN = "<!-- try-mutations:begin -->";
const DOC_END = "<!-- try-mutations:end -->";

// ---------------------------------------------------------------------------------------------
// Options

function parseArgs(argv: readonly string[]) {
  const options = {
    only: [] as string[],
    isolation: false,
    writeDoc: false,
    updateDoc: false,
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
    else if (arg === "--update-doc") options.updateDoc = true;
    else if (arg === "--dry-run") options.dryRun = true;
    else usage(`unknown argument ${arg}`);
  }
  if (options.writeDoc && options.only.length > 0) {
    usage("--write-doc regenerates the table from a run of the whole catalogue; drop --only");
  }
  if (options.updateDoc && options.only.length === 0) {
    usage("--update-doc rewrites the rows of the entries --only selects; for all, use --write-doc");
  }
  return options;
}

function usage(problem: string): never {
  process.stderr.write(
    `${problem}\nusage: bun run test:acceptance-mutations [--only <substring>] [--check-isolation] [--write-doc | --update-doc] [--dry-run]\n`,
  );
  process.exit(2);
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

  // 1. One unmutated run: green, and holding every named check exactly once. A full run also
  // holds the suites whose every check must be listed; some entries name checks of other suites.
  const files = [
    ...new Set([...(full ? SUITES : []), ...[...entries, ...noMutation].map((e) => e.check.file)]),
  ];
  process.stdout.write(`baseline: ${files.length} suite file(s), unmutated\n`);
  const baseline = await runVitest(
    files,
    ["--includeTaskLocation"],
    "baseline",
    BASELINE_TIMEOUT_MS,
  );
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
    const target = `${label(entry.check)}  ← ${placeOf(entry.mutation)}: ${entry.mutation.why}`;
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
  if (options.updateDoc) writeDoc(results, baseline, { startedAt, elapsed, partial: true });
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

/** A suite's place in the table: the suites listed whole in their order, then the others'. */
const suiteOrder = (file: string) => {
  const index = SUITES.indexOf(file);
  return index === -1 ? SUITES.length : index;
};

/** The lines of the generated section of `doc`. */
const tableSection = (doc: string) =>
  doc.slice(doc.indexOf(DOC_BEGIN), doc.indexOf(DOC_END)).split("\n");

/**
 * A check and a row (that check and its mutation) by their cells as the table writes them, so a
 * key built from the catalogue and one read back from the table agree.
 */
const keyOf = (...cells: string[]) => cells.join("\u0000");
const checkKey = (check: Check) => keyOf(`\`${check.file}\``, cell(check.name));
const rowKey = (check: Check, mutation: string) => keyOf(checkKey(check), cell(mutation));

/**
 * What the table in `doc` says: each row's result by {@link rowKey}, each check's place by
 * {@link checkKey}, and its summary lines (the last full run's, and any partial run's since).
 */
function readTable(doc: string) {
  const results = new Map<string, string>();
  const places = new Map<string, number>();
  const lines = tableSection(doc);
  for (const line of lines) {
    if (!line.startsWith("| `")) continue;
    // Cells are split at pipes the table did not escape; the formatter pads them with spaces.
    const cells = line
      .slice(1, -1)
      .split(/(?<!\\)\|/)
      .map((c) => c.trim());
    const [file, name, mutation, result] = cells;
    if (cells.length !== 4 || !file || !name || !mutation || !result) continue;
    const check = keyOf(file, name);
    results.set(keyOf(check, mutation), result);
    if (!places.has(check)) places.set(check, places.size);
  }
  const summary = lines.filter(
    (l) => l.startsWith("Last full run:") || l.startsWith("Tried again"),
  );
  return { results, places, summary };
}

/**
 * A summary line of partial runs: how many tries of entries one day saw (an entry tried twice
 * counts twice), and how many of them were killed.
 */
const TRIED_AGAIN =
  /^Tried again on their own since: (\d+) (?:try|tries) on (\S+) \(`--update-doc`\), (\d+) killed; their rows say so\.$/;

/**
 * The table's summary lines with one more partial run of `date`: added into that day's line, so
 * a day of partial runs reads as one line however many there were.
 */
function triedAgain(
  summary: readonly string[],
  run: { date: string; tried: number; killed: number },
): string[] {
  let { tried, killed } = run;
  const others = summary.filter((line) => {
    const same = TRIED_AGAIN.exec(line);
    if (same?.[2] !== run.date) return true;
    tried += Number(same[1]);
    killed += Number(same[3]);
    return false;
  });
  return [
    ...others,
    `Tried again on their own since: ${tried} ${tried === 1 ? "try" : "tries"} on ${run.date} (\`--update-doc\`), ${killed} killed; their rows say so.`,
  ];
}

function writeDoc(
  results: Map<Entry, Result>,
  baseline: VitestRun,
  run: { startedAt: Date; elapsed: number; isolation?: boolean; partial?: boolean },
) {
  const { startedAt, elapsed } = run;
  const doc = readFileSync(DOC, "utf8");
  /** A partial run keeps what the table said of every row it did not try. */
  const earlier = run.partial ? readTable(doc) : undefined;
  /** Where a check's row stood in the earlier table; a new check goes last. */
  const placeOfCheck = (check: Check) =>
    earlier?.places.get(checkKey(check)) ?? Number.MAX_SAFE_INTEGER;
  const lineOf = (check: Check) => testsOf(baseline, check)[0]?.location?.line ?? 0;
  /**
   * Within a suite, rows go by their check's line; a partial run's baseline holds only its own
   * suites, so it has no line for the others and keeps the table's order instead.
   */
  const withinSuite = earlier ? placeOfCheck : lineOf;
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
      const where = [e.mutation, ...also]
        .map(placeOf)
        .filter((f, i, all) => all.indexOf(f) === i)
        .map((f) => `\`${f}\``)
        .join(" + ");
      const mutation = `${where}: ${e.mutation.why}`;
      const tried = results.get(e);
      const kept = tried ? undefined : earlier?.results.get(rowKey(e.check, mutation));
      return { check: e.check, mutation, result: kept ?? outcome(tried) };
    }),
    ...NO_MUTATION.map((e) => ({
      check: e.check,
      mutation: `none: ${e.reason}`,
      result: "no product mutation",
    })),
  ].sort(
    (a, b) =>
      suiteOrder(a.check.file) - suiteOrder(b.check.file) ||
      withinSuite(a.check) - withinSuite(b.check),
  );
  const table = [
    "| test file | check | mutation (file: why) | result |",
    "| --- | --- | --- | --- |",
    ...rows.map(
      (r) => `| \`${r.check.file}\` | ${cell(r.check.name)} | ${cell(r.mutation)} | ${r.result} |`,
    ),
  ];
  const summary = earlier
    ? triedAgain(earlier.summary, { date, tried: results.size, killed })
    : [
        `Last full run: ${date}, ${MUTATIONS.length} mutations tried, ${killed} killed, ${NO_MUTATION.length} check(s) without a mutation; ${formatDuration(elapsed)} on ${availableParallelism()} cores (one vitest run with its own embedded PostgreSQL per entry, one at a time)${run.isolation ? "; with `--check-isolation`, so every check also passed alone, unmutated, first" : ""}.`,
      ];
  const section = [
    DOC_BEGIN,
    "<!-- Generated by `bun run test:acceptance-mutations --write-doc` (or `--update-doc`); edit scripts/acceptance-mutations.ts, not this table. -->",
    "",
    ...summary.flatMap((line) => [line, ""]),
    ...table,
    DOC_END,
  ].join("\n");
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
    if (leave()) return;
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
  if (holdsMutation()) restoreAll();
});

await main();
