/**
 * Benchmark load generator, run as its own process by scripts/bench.ts so that client work does
 * not share the server's event loop. N official SDK clients (or, with BENCH_CLIENT=lean, N lean
 * ones) call one tool over loopback HTTP for a fixed time and print one JSON line: calls, errors,
 * and per-call latencies summarised.
 *
 * argv: <url> <workload: save|read|recall|recall-scale|remember-scale|attack> <seconds> <token>...
 *
 * A token argument may name several tokens, comma-separated (`a,b`): that client then holds one
 * SDK client per token and alternates between them call by call, and the JSON line adds the
 * latencies of each position (`slots`), so two credentials are compared under the same load at
 * the same moments. BENCH_LATENCIES_FILE, if set, receives every latency (ms) of each position.
 */
import { writeFile } from "node:fs/promises";
import { benchNumber } from "./bench-settings.ts";
import { connectSdkClient } from "./sdk-client.ts";

const [url, workload, secondsText, ...tokens] = process.argv.slice(2);
if (!url || !workload || !secondsText || tokens.length === 0) {
  console.error("usage: bench-clients <url> <save|read|recall|attack> <seconds> <token>...");
  process.exit(2);
}
const seconds = Number(secondsText);

/** What a load generator calls: a tool, by name and arguments. */
interface Caller {
  callTool(params: { name: string; arguments: object }): Promise<{ isError?: boolean }>;
  close(): Promise<void>;
}

/**
 * BENCH_CLIENT=lean: the official client opens the connection (initialize, as a host does),
 * then each call is one `fetch` of the same JSON-RPC request with the same headers: the
 * server's work is the same, the client's about half (no result validation, no transport
 * machinery), which shows whether the SDK client's CPU on the shared cores holds North back.
 */
async function connectLean(token: string): Promise<Caller> {
  const sdk = await connectSdkClient(url as string, token, "north-bench");
  // The revision the handshake agreed, as the SDK's transport sends it on every later request.
  const protocolVersion =
    (sdk.transport as { protocolVersion?: string } | undefined)?.protocolVersion ?? "2025-11-25";
  await sdk.close();
  const headers = {
    authorization: `Bearer ${token}`,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": protocolVersion,
  };
  let id = 0;
  return {
    async callTool(params) {
      id += 1;
      const response = await fetch(url as string, {
        method: "POST",
        headers,
        body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params }),
      });
      const message = (await response.json()) as {
        result?: { isError?: boolean };
        error?: unknown;
      };
      if (!response.ok || !message.result)
        throw new Error(`tools/call answered ${response.status}`);
      return message.result;
    },
    close: async () => {},
  };
}

const connect = (token: string): Promise<Caller> =>
  process.env.BENCH_CLIENT === "lean"
    ? connectLean(token)
    : (connectSdkClient(url, token, "north-bench") as Promise<Caller>);

/** One group per token argument: the SDK clients it alternates between. */
const groups = await Promise.all(
  tokens.map((spec) => Promise.all(spec.split(",").map((token) => connect(token)))),
);
const slots = Math.max(...groups.map((g) => g.length));

const bySlot: number[][] = Array.from({ length: slots }, () => []);
let errors = 0;
/** The bounded form of the review's denial-of-service: a longest allowed query of OR-ed terms. */
const attackQuery = (n: number) =>
  Array.from({ length: 200 }, (_, k) => `term${(k + n) % 50}`)
    .join(" or ")
    .slice(0, 1000)
    .replace(/ o?r?$/, "");

/** The scale workload's query: a common, a middling and a unique word in turn (bench-scale.ts). */
const SCALE_SIZE = benchNumber("BENCH_SCALE_SIZE", 1, { min: 1, integer: true });
const scaleQuery = (index: number, n: number) => {
  const x = index * 7919 + n * 104729;
  const kind = (index + n) % 3;
  return kind === 0
    ? `term${x % 50}`
    : kind === 1
      ? `matter${x % 1000}`
      : `ref${1 + (x % SCALE_SIZE)}`;
};

/** Each workload's tool call: client `index`'s `n`-th (a negative `n` is a warm-up call). */
const CALLS: Record<string, (index: number, n: number) => { name: string; arguments: object }> = {
  attack: (index, n) => ({
    name: "north__memory_recall",
    arguments: { query: attackQuery(index + n), limit: 20 },
  }),
  "recall-scale": (index, n) => ({
    name: "north__memory_recall",
    arguments: { query: scaleQuery(index, n), limit: 5 },
  }),
  "remember-scale": (index, n) => ({
    name: "north__memory_remember",
    arguments: {
      kind: "fact",
      origin: "stated",
      body: `Bench memory ${index}-${n}-${process.pid} about term${(index * 7919 + n) % 50}`,
    },
  }),
  recall: (index, n) => ({
    name: "north__memory_recall",
    arguments: { query: `term${(index * 7919 + n) % 50}`, limit: 5 },
  }),
  save: (index, n) => ({
    name: "north__working_profile_answer",
    arguments: {
      question: `Bench question ${index}-${n}-${process.pid}?`,
      answer: "A benchmark answer.",
    },
  }),
  read: () => ({ name: "north__working_profile", arguments: {} }),
};
const callOf = CALLS[workload];
if (!callOf) throw new Error(`unknown workload ${workload}`);
const call = (client: Caller, index: number, n: number) => client.callTool(callOf(index, n));

// Warm-up, not measured: one call per SDK client, then BENCH_WARMUP_SECONDS (default 2) of the
// workload itself, so the figures are not this fresh process's first compiles, its connections'
// opening, or the server's pool preparing each connection's statements. The server's own JIT
// needs longer: bench.ts warms it once per workload (BENCH_SERVER_WARMUP_SECONDS).
await Promise.all(groups.flatMap((g, i) => g.map((c) => call(c, i, -1))));
const warmUntil = performance.now() + benchNumber("BENCH_WARMUP_SECONDS", 2, { min: 0 }) * 1000;
let warmupCalls = groups.flat().length;
await Promise.all(
  groups.map(async (group, index) => {
    for (let n = 0; performance.now() < warmUntil; n++) {
      await call(group[n % group.length] as Caller, index, 1_000_000 + n);
      warmupCalls++;
    }
  }),
);

const started = performance.now();
const deadline = started + seconds * 1000;
await Promise.all(
  groups.map(async (group, index) => {
    for (let n = 0; performance.now() < deadline; n++) {
      const slot = n % group.length;
      const t0 = performance.now();
      const result = await call(group[slot] as Caller, index, n);
      bySlot[slot]?.push(performance.now() - t0);
      if (result.isError) errors++;
    }
  }),
);
const elapsed = (performance.now() - started) / 1000;
await Promise.all(groups.flat().map((c) => c.close()));

for (const latencies of bySlot) latencies.sort((a, b) => a - b);
if (process.env.BENCH_LATENCIES_FILE) {
  await writeFile(process.env.BENCH_LATENCIES_FILE, JSON.stringify(bySlot));
}
const summary = (latencies: number[]) => {
  const pick = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { calls: latencies.length, p50: pick(0.5), p99: pick(0.99) };
};
console.log(
  JSON.stringify({
    ...summary(bySlot.flat().sort((a, b) => a - b)),
    errors,
    elapsed,
    // CPU figures taken around the whole process divide by calls + warmupCalls.
    warmupCalls,
    cpuSeconds: (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
    ...(slots > 1 ? { slots: bySlot.map(summary) } : {}),
  }),
);
