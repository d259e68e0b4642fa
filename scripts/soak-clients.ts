/**
 * The soak's load (scripts/soak.ts), run as its own process so that client work does not share
 * the server's event loop or its RSS. One official SDK client per token calls, one call at a
 * time, a mix of working-profile saves and reads and memory remembers and recalls until the
 * time is up, then prints one JSON line: calls, errors, and per-minute latencies.
 *
 * Bounded: each client has one call in flight, its saves go to ten questions of its own (created,
 * then corrected with the version it last saw, so never a conflict), and every call times out.
 *
 * argv: <url> <seconds> <token>...
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { connectSdkClient } from "./sdk-client.ts";

const [url, secondsText, ...tokens] = process.argv.slice(2);
if (!url || !secondsText || tokens.length === 0) {
  console.error("usage: soak-clients <url> <seconds> <token>...");
  process.exit(2);
}
const seconds = Number(secondsText);
/** A call with no answer by then counts as an error (the SDK aborts it). */
const CALL_TIMEOUT_MS = 30_000;
const QUESTIONS = 10;

type Op = "save" | "read" | "remember" | "recall";
/** 3 saves, 3 reads, 2 remembers, 2 recalls in every ten calls. */
const MIX: Op[] = [
  "save",
  "read",
  "remember",
  "recall",
  "save",
  "read",
  "recall",
  "save",
  "read",
  "remember",
];

const clients = await Promise.all(
  tokens.map((token) => connectSdkClient(url, token, "north-soak", CALL_TIMEOUT_MS)),
);

interface Minute {
  latencies: number[];
  errors: number;
}
const minutes: Minute[] = [];
const byOp = new Map<Op, { latencies: number[]; errors: number }>(
  MIX.map((op) => [op, { latencies: [], errors: 0 }]),
);
const errorSamples: string[] = [];

const pick = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
const summary = (latencies: number[]) => {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    calls: sorted.length,
    p50: pick(sorted, 0.5),
    p99: pick(sorted, 0.99),
    max: sorted.at(-1) ?? 0,
  };
};

/** One call of `op` by client `index`; returns whether it succeeded as expected. */
async function run(
  client: Client,
  op: Op,
  index: number,
  n: number,
  versions: (number | undefined)[],
): Promise<{ ok: boolean; detail?: string }> {
  const text = (result: unknown) =>
    ((result as { content?: { text?: string }[] }).content?.[0]?.text ?? "").slice(0, 200);
  switch (op) {
    case "save": {
      const k = n % QUESTIONS;
      const version = versions[k];
      const result = await client.callTool({
        name: "north__working_profile_answer",
        arguments: {
          question: `Soak question ${k}: how do you want matter ${k} handled?`,
          question_id: `soak-q${k}`,
          answer: `Answer ${n} from client ${index}: plain words, short paragraphs, no jargon.`,
          ...(version === undefined ? {} : { expected_version: version }),
        },
      });
      const receipt = result.structuredContent as { outcome?: string; answer_version?: number };
      const expected = version === undefined ? "created" : "updated";
      if (result.isError || receipt?.outcome !== expected)
        return { ok: false, detail: text(result) };
      versions[k] = receipt.answer_version;
      return { ok: true };
    }
    case "read": {
      const result = await client.callTool({ name: "north__working_profile", arguments: {} });
      return result.isError ? { ok: false, detail: text(result) } : { ok: true };
    }
    case "remember": {
      const result = await client.callTool({
        name: "north__memory_remember",
        arguments: {
          kind: "fact",
          origin: "stated",
          body: `Soak fact ${index}-${n}: the client prefers term${n % 50} for matter${n % 1000}.`,
        },
      });
      return result.isError ? { ok: false, detail: text(result) } : { ok: true };
    }
    case "recall": {
      const result = await client.callTool({
        name: "north__memory_recall",
        arguments: { query: `term${(index * 7 + n) % 50}`, limit: 5 },
      });
      return result.isError ? { ok: false, detail: text(result) } : { ok: true };
    }
  }
}

const LAST_MINUTE = Math.max(0, Math.ceil(seconds / 60) - 1);
const started = performance.now();
const deadline = started + seconds * 1000;
let reported = 0;
const progress = setInterval(() => {
  // Each finished minute once, on stderr, while the run goes on.
  const finished = Math.floor((performance.now() - started) / 60_000);
  for (; reported < finished; reported++) {
    const m = minutes[reported];
    if (!m) continue;
    const s = summary(m.latencies);
    console.error(
      `minute ${reported + 1}: ${s.calls} calls, ${m.errors} errors, p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms`,
    );
  }
}, 1_000);

await Promise.all(
  clients.map(async (client, index) => {
    const versions: (number | undefined)[] = new Array(QUESTIONS).fill(undefined);
    for (let n = 0; performance.now() < deadline; n++) {
      const op = MIX[n % MIX.length] as Op;
      const t0 = performance.now();
      let outcome: { ok: boolean; detail?: string };
      try {
        outcome = await run(client, op, index, n, versions);
      } catch (error) {
        outcome = { ok: false, detail: String(error).slice(0, 200) };
      }
      const ms = performance.now() - t0;
      // A call that starts in the last instant belongs to the last minute, not a new one.
      const minute = Math.min(Math.floor((t0 - started) / 60_000), LAST_MINUTE);
      minutes[minute] ??= { latencies: [], errors: 0 };
      const bucket = minutes[minute];
      const tally = byOp.get(op);
      bucket.latencies.push(ms);
      tally?.latencies.push(ms);
      if (!outcome.ok) {
        bucket.errors++;
        if (tally) tally.errors++;
        if (errorSamples.length < 5) errorSamples.push(`${op}: ${outcome.detail}`);
      }
    }
  }),
);
clearInterval(progress);
const elapsed = (performance.now() - started) / 1000;
await Promise.all(clients.map((c) => c.close()));

const all = minutes.flatMap((m) => m.latencies);
console.log(
  JSON.stringify({
    ...summary(all),
    errors: minutes.reduce((sum, m) => sum + m.errors, 0),
    elapsed,
    minutes: minutes.map((m, i) => ({ minute: i + 1, ...summary(m.latencies), errors: m.errors })),
    byOp: Object.fromEntries(
      [...byOp].map(([op, t]) => [op, { ...summary(t.latencies), errors: t.errors }]),
    ),
    errorSamples,
  }),
);
