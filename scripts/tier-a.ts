/**
 * `bun run test:tier-a`: the working-profile plan's conversational (Tier A) cases with a real
 * Claude model (issue 22, point 7; docs/tier-a.md). The same harness and cases as
 * test/hosts/tier-a.test.ts, with the real Claude Code CLI talking to Anthropic's API (or to
 * `ANTHROPIC_BASE_URL` when set) instead of the scripted stand-in.
 *
 * Every case runs; every miss is reported with its trace (tool calls, receipts, excerpts of
 * what the assistant said, the rows). No success threshold: exit 1 when any case missed, 0 when
 * all held. Without `ANTHROPIC_API_KEY` it says it did not run and exits 2 — never a pass.
 *
 * Env: ANTHROPIC_API_KEY (required), ANTHROPIC_BASE_URL (optional), TIER_A_MODEL (default
 * claude-sonnet-5, the Sonnet this Claude Code release names), TIER_A_ONLY (comma-separated case
 * ids), TIER_A_WINDOW_S (the rate-limit case's window, default 20), DATABASE_URL (a superuser
 * URL; else an embedded PostgreSQL in a temporary folder).
 */
import { TIER_A_CASES } from "../test/tier-a/cases.ts";
import { type CaseReport, startTierA } from "../test/tier-a/harness.ts";
import { createDisposableDatabase } from "../test/tier-a/postgres.ts";

const DEFAULT_MODEL = "claude-sonnet-5";

const apiKey = process.env.ANTHROPIC_API_KEY;
if (!apiKey) {
  process.stdout.write("tier-a: did not run: ANTHROPIC_API_KEY is not set (not a pass)\n");
  process.exit(2);
}
const model = process.env.TIER_A_MODEL || DEFAULT_MODEL;
const only = (process.env.TIER_A_ONLY ?? "").split(",").filter(Boolean);
const cases = TIER_A_CASES.filter((c) => only.length === 0 || only.includes(c.id));
if (cases.length === 0) {
  process.stdout.write(`tier-a: no case matches TIER_A_ONLY=${only.join(",")}\n`);
  process.exit(2);
}

const database = await createDisposableDatabase();
const reports: CaseReport[] = [];
let failure: unknown;
try {
  const tierA = await startTierA({
    database,
    model: { kind: "real", apiKey, baseUrl: process.env.ANTHROPIC_BASE_URL, model },
    windowS: process.env.TIER_A_WINDOW_S ? Number(process.env.TIER_A_WINDOW_S) : undefined,
  });
  try {
    process.stdout.write(`tier-a: ${cases.length} cases with ${model}\n`);
    for (const tierACase of cases) {
      const started = Date.now();
      const report = await tierA.runCase(tierACase).catch(
        (error: Error): CaseReport => ({
          id: tierACase.id,
          title: tierACase.title,
          misses: [`the case could not run: ${error.message}`],
          trace: [],
        }),
      );
      reports.push(report);
      const seconds = ((Date.now() - started) / 1000).toFixed(0);
      const verdict = report.misses.length ? `MISSED (${report.misses.length})` : "held";
      process.stdout.write(`${verdict.padEnd(12)} ${report.id} (${seconds} s)\n`);
    }
  } finally {
    await tierA.close();
  }
} catch (error) {
  failure = error;
} finally {
  await database.drop();
}

for (const report of reports.filter((r) => r.misses.length)) {
  process.stdout.write(`\n=== ${report.id}: ${report.title}\n`);
  for (const miss of report.misses) process.stdout.write(`miss: ${miss}\n`);
  process.stdout.write(`${report.trace.join("\n")}\n`);
}
if (failure) {
  process.stdout.write(`\ntier-a: the run stopped: ${(failure as Error).stack ?? failure}\n`);
  process.exit(1);
}
const missed = reports.filter((r) => r.misses.length).length;
process.stdout.write(
  `\ntier-a: ${reports.length - missed} held, ${missed} missed, with ${model}\n`,
);
process.exit(missed ? 1 : 0);
