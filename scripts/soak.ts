/**
 * `bun run soak`: `north serve` as its own process on a disposable embedded PostgreSQL, under a
 * steady mix of working-profile saves and reads and memory remembers and recalls from 8 SDK
 * clients (scripts/soak-clients.ts, another process) for 5 minutes. Prints calls, errors
 * (target 0), p50/p99 per minute, and the server's RSS (VmRSS of its process) at start, after
 * the warm-up minute and at the end (target: growth after warm-up ≤ 10%). Not a test: a figure
 * for docs/benchmarks.md.
 *
 * The product path: the clients sign in with API tokens (`createApiToken`) that the server
 * resolves with `createAuthResolver`; the server runs with serve's defaults (pool of 10, 5 s
 * statement timeout, tenant gate, pino logs at info to a file), limits raised so none is hit.
 *
 * Env: SOAK_SECONDS (default 300), SOAK_CLIENTS (default 8; two per organisation),
 * DATABASE_URL (a superuser URL; else an embedded PostgreSQL in a temporary folder).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, openSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import {
  addMember,
  connectDatabase,
  createApiToken,
  createOrganization,
  freePort,
} from "@north/db";
import { createBenchDatabase } from "./bench-database.ts";

const SECONDS = Number(process.env.SOAK_SECONDS ?? 300);
const CLIENTS = Number(process.env.SOAK_CLIENTS ?? 8);
/** The first minute (or a fifth of a shorter run) warms caches and the JIT; growth is after it. */
const WARMUP_S = Math.min(60, SECONDS / 5);
const RSS_EVERY_MS = 2_000;
/** RSS after the warm-up and at the end: the median of this many seconds of samples. */
const WINDOW_S = Math.min(30, SECONDS / 10);
const ROOT = path.resolve(import.meta.dirname, "..");
const CLI = path.join(ROOT, "apps/north/src/main.ts");

/** The server's resident set, from /proc (Linux), in MiB. */
async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kb = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]);
  if (!Number.isFinite(kb)) throw new Error(`no VmRSS for process ${pid}`);
  return kb / 1024;
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

/** SIGTERM (serve drains and exits 0), SIGKILL if it has not exited 20 s later. */
async function stopServer(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  try {
    return await exited(child);
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves once `/readyz` answers 200, or throws after `ms`. */
async function waitReady(base: string, child: ChildProcess, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`north serve exited ${child.exitCode}`);
    const ready = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2_000) }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ready) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error("north serve did not become ready");
}

const bench = await createBenchDatabase("north_soak");
const { scratch } = bench;

let server: ChildProcess | undefined;
try {
  // Two lawyers per organisation, so the tenant gate (3 per organisation) never refuses one.
  const owner = connectDatabase(bench.ownerUrl, { max: 2 });
  const tokens: string[] = [];
  let organizationId = "";
  for (let i = 0; i < CLIENTS; i++) {
    if (i % 2 === 0) {
      organizationId = (await createOrganization(owner.db, { name: `Soak ${i / 2}` })).id;
    }
    const member = await addMember(owner.db, { organizationId, email: `soak${i}@example.test` });
    const { token } = await createApiToken(owner.db, {
      organizationId,
      userId: member.userId,
      scopes: ["profile:write", "memory:read", "memory:write"],
      expiresAt: null,
    });
    tokens.push(token);
  }
  await owner.close();

  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const logFile = path.join(scratch, "serve.log");
  const log = openSync(logFile, "w");
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(DATABASE_|NORTH_|REDIS_URL|DB_APP_)/.test(key)) env[key] = value;
  }
  server = spawn("bun", [CLI, "serve", "--port", String(port), "--host", "127.0.0.1"], {
    cwd: ROOT,
    env: {
      ...env,
      DATABASE_APP_URL: bench.appUrl,
      NORTH_HOME: path.join(scratch, "home"),
      NORTH_AUDIT_KEY: randomBytes(24).toString("hex"),
      NORTH_SECRET_KEY: randomBytes(24).toString("hex"),
      NORTH_WRITES_PER_MINUTE: "1000000",
      NORTH_READS_PER_MINUTE: "1000000",
      NORTH_PROTOCOL_REQUESTS_PER_MINUTE: "1000000",
      LOG_LEVEL: "info",
    },
    stdio: ["ignore", log, log],
  });
  closeSync(log);
  const pid = server.pid;
  if (pid === undefined) throw new Error("north serve did not start");
  await waitReady(base, server);

  const rss: { t: number; mib: number }[] = [];
  const rssAtStart = await rssMiB(pid);
  console.error(
    `soak: north serve (pid ${pid}) ready, RSS ${rssAtStart.toFixed(1)} MiB; ${CLIENTS} clients for ${SECONDS} s`,
  );
  const loadStarted = performance.now();
  const sampler = setInterval(() => {
    rssMiB(pid).then(
      (mib) => rss.push({ t: (performance.now() - loadStarted) / 1000, mib }),
      () => {},
    );
  }, RSS_EVERY_MS);

  const clients = spawn(
    "bun",
    [path.join(import.meta.dirname, "soak-clients.ts"), `${base}/mcp`, String(SECONDS), ...tokens],
    { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] },
  );
  let out = "";
  clients.stdout?.on("data", (d) => {
    out += d;
  });
  const code = await exited(clients);
  clearInterval(sampler);
  const rssAtEnd = await rssMiB(pid);
  if (code !== 0) throw new Error(`soak clients exited ${code}`);
  const result = JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as {
    calls: number;
    errors: number;
    elapsed: number;
    p50: number;
    p99: number;
    minutes: { minute: number; calls: number; errors: number; p50: number; p99: number }[];
    byOp: Record<string, { calls: number; errors: number; p50: number; p99: number }>;
    errorSamples: string[];
  };

  // What the server says of itself: /metrics when it is served (loopback), and its error lines.
  const metrics = await fetch(`${base}/metrics`).then((r) => (r.ok ? r.text() : undefined));
  const served = metrics
    ?.split("\n")
    .filter((l) => l.startsWith("north_tool_calls_total{"))
    .reduce((sum, l) => sum + Number(l.split(" ").at(-1)), 0);
  const logText = await readFile(logFile, "utf8");
  const errorLines = logText.split("\n").filter((l) => /"level":(50|60)/.test(l)).length;
  const logMiB = (await stat(logFile)).size / 1024 / 1024;
  const exitCode = await stopServer(server);

  // One sample can land just before or after a collection: compare medians of two windows, the
  // one right after the warm-up and the last one.
  const median = (values: number[]) =>
    [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
  const warm = median(
    rss.filter((s) => s.t >= WARMUP_S && s.t < WARMUP_S + WINDOW_S).map((s) => s.mib),
  );
  const end = median(rss.filter((s) => s.t >= SECONDS - WINDOW_S).map((s) => s.mib));
  const peak = Math.max(...rss.map((s) => s.mib), rssAtEnd);
  const rssAtMinute = (minute: number) =>
    rss.filter((s) => s.t <= minute * 60 + 1).at(-1)?.mib ?? rssAtEnd;
  const growth = (end / warm - 1) * 100;

  console.log(
    `\nSoak: ${CLIENTS} clients (${CLIENTS / 2} organisations), ${SECONDS} s, one call in flight each: 3 saves, 3 profile reads, 2 remembers, 2 recalls in every 10 calls; \`north serve\` as its own process, API tokens\n`,
  );
  console.log("| minute | calls | errors | p50 ms | p99 ms | server RSS MiB at its end |");
  console.log("|---|---|---|---|---|---|");
  for (const m of result.minutes) {
    console.log(
      `| ${m.minute} | ${m.calls} | ${m.errors} | ${m.p50.toFixed(1)} | ${m.p99.toFixed(1)} | ${rssAtMinute(m.minute).toFixed(1)} |`,
    );
  }
  console.log("\n| tool | calls | errors | p50 ms | p99 ms |");
  console.log("|---|---|---|---|---|");
  for (const [op, s] of Object.entries(result.byOp)) {
    console.log(`| ${op} | ${s.calls} | ${s.errors} | ${s.p50.toFixed(1)} | ${s.p99.toFixed(1)} |`);
  }
  console.log(
    `\nCalls: ${result.calls} in ${result.elapsed.toFixed(0)} s (${(result.calls / result.elapsed).toFixed(0)}/s); errors: ${result.errors} (target 0): ${result.errors === 0 ? "PASS" : "FAIL"}.`,
  );
  console.log(
    `Server RSS: ${rssAtStart.toFixed(1)} MiB at start (idle), ${warm.toFixed(1)} MiB after the ${WARMUP_S.toFixed(0)} s warm-up and ${end.toFixed(1)} MiB at the end (medians of ${WINDOW_S.toFixed(0)} s windows; last sample ${rssAtEnd.toFixed(1)}, peak ${peak.toFixed(1)}): growth after warm-up ${growth.toFixed(1)}% (target ≤ 10%): ${growth <= 10 ? "PASS" : "FAIL"}.`,
  );
  console.log(
    `Server: ${served === undefined ? "/metrics not served" : `/metrics counted ${served} tool calls`}; ${errorLines} error lines in ${logMiB.toFixed(0)} MiB of logs; exit ${exitCode} on SIGTERM.`,
  );
  for (const sample of result.errorSamples) console.log(`error: ${sample}`);
} finally {
  if (server) await stopServer(server);
  await bench.drop();
}
