import { timingSafeEqual } from "node:crypto";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { RateLimiter } from "./limiter.ts";
import { isLoopbackAddress } from "./loopback.ts";
import type { AuditNote, Embedder, EmbedderFailureClass } from "./tool-definition.ts";

/**
 * What `/metrics` counts (SPEC §10): every label is a tool name or one of these enums, never a
 * body, an id or an email. Each app has its own registry, so several apps in one process (the
 * suites) do not share counters.
 */

/** How a tool call ended: the handler's audit outcome, or how the runner refused or failed it. */
export type ToolCallOutcome =
  | AuditNote["outcome"]
  | "rate_limited"
  | "invalid_arguments"
  | "timeout"
  | "unavailable"
  /** The remembered credential no longer held (decision 036): the request is looked up again. */
  | "credential_refused"
  | "error";

/** What the tool runner reports; absent (stdio), nothing is counted. */
export interface ToolMetrics {
  /** One finished call of a registered tool, with its latency in seconds. */
  toolCall(tool: string, outcome: ToolCallOutcome, seconds: number): void;
  /**
   * Runs one tool-call transaction, counting it as waiting for a pooled connection until the
   * transaction calls `acquired()` (its callback runs: BEGIN went through) and as holding one
   * from then until it settles.
   */
  pooled<T>(work: (acquired: () => void) => Promise<T>): Promise<T>;
}

export interface AppMetrics extends ToolMetrics {
  registry: Registry;
}

export interface AppMetricsOptions {
  limiter: RateLimiter;
  embedder?: Embedder;
  /** Size of the app pool (postgres.js `max`), when known. */
  poolMax?: number;
}

/** Seconds. Tool calls take milliseconds; the statement timeout (5 s by default) caps them. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const FAILURE_CLASSES: readonly EmbedderFailureClass[] = [
  "rate_limited",
  "credential_refused",
  "rejected",
  "unreachable",
  "timeout",
];

/** A fresh registry with North's metrics, read from the limiter and embedder at each scrape. */
export function createAppMetrics(options: AppMetricsOptions): AppMetrics {
  const registry = new Registry();
  const registers = [registry];

  const calls = new Counter({
    name: "north_tool_calls_total",
    help: "Tool calls answered by this replica, by tool and outcome.",
    labelNames: ["tool", "outcome"] as const,
    registers,
  });
  const latency = new Histogram({
    name: "north_tool_call_duration_seconds",
    help: "Time from a validated tool call to its answer, limiter and transaction included.",
    labelNames: ["tool"] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });

  // postgres.js exposes no pool counters, so these count what North itself knows: the tool
  // calls' tenant transactions. Token checks, /readyz and background jobs use the pool too.
  let inUse = 0;
  let waiting = 0;
  new Gauge({
    name: "north_db_pool_in_use",
    help: "Tool-call transactions of this replica holding an app-pool connection (BEGIN sent). Token checks, /readyz and background jobs are not counted.",
    registers,
    collect() {
      this.set(inUse);
    },
  });
  new Gauge({
    name: "north_db_pool_waiting",
    help: "Tool-call transactions of this replica waiting for an app-pool connection.",
    registers,
    collect() {
      this.set(waiting);
    },
  });
  if (options.poolMax !== undefined) {
    const max = options.poolMax;
    new Gauge({
      name: "north_db_pool_max",
      help: "Connections the app pool of this replica may open (NORTH_DB_POOL_MAX).",
      registers,
      collect() {
        this.set(max);
      },
    });
  }

  limiterGauges(registers, options.limiter);
  if (options.embedder) embedderGauges(registers, options.embedder);

  new Gauge({
    name: "process_resident_memory_bytes",
    help: "Resident memory size in bytes.",
    registers,
    collect() {
      this.set(process.memoryUsage.rss());
    },
  });

  return {
    registry,
    toolCall(tool, outcome, seconds) {
      calls.inc({ tool, outcome });
      latency.observe({ tool }, seconds);
    },
    async pooled(work) {
      waiting += 1;
      let holding = false;
      const acquired = () => {
        if (holding) return;
        holding = true;
        waiting -= 1;
        inUse += 1;
      };
      try {
        return await work(acquired);
      } finally {
        if (holding) inUse -= 1;
        else waiting -= 1;
      }
    },
  };
}

/** The limiter's mode and whether its Redis is unreachable, read at each scrape. */
function limiterGauges(registers: Registry[], limiter: RateLimiter) {
  new Gauge({
    name: "north_rate_limiter_mode",
    help: "1 for the limiter answering calls now: redis, or memory (none configured, or the in-process insurance limiter while Redis is unreachable).",
    labelNames: ["mode"] as const,
    registers,
    collect() {
      const status = limiter.status();
      const onRedis = status.backend === "redis" && !status.degraded;
      this.set({ mode: "redis" }, onRedis ? 1 : 0);
      this.set({ mode: "memory" }, onRedis ? 0 : 1);
    },
  });
  new Gauge({
    name: "north_rate_limiter_degraded",
    help: "1 while the configured Redis is unreachable and the in-process insurance limiter answers.",
    registers,
    collect() {
      this.set(limiter.status().degraded ? 1 : 0);
    },
  });
}

/** The embeddings provider's state and latest failure class, read at each scrape. */
function embedderGauges(registers: Registry[], embedder: Embedder) {
  new Gauge({
    name: "north_embedder_state",
    help: "1 for the embeddings provider's state: ok, or degraded (recall falls back to full text).",
    labelNames: ["state"] as const,
    registers,
    collect() {
      const degraded = embedder.status?.().state === "degraded";
      this.set({ state: "ok" }, degraded ? 0 : 1);
      this.set({ state: "degraded" }, degraded ? 1 : 0);
    },
  });
  new Gauge({
    name: "north_embedder_failure",
    help: "1 for the class of the embeddings provider's latest failure while degraded; all 0 when ok.",
    labelNames: ["class"] as const,
    registers,
    collect() {
      const status = embedder.status?.();
      const failing = status?.state === "degraded" ? status.class : undefined;
      for (const name of FAILURE_CLASSES) this.set({ class: name }, name === failing ? 1 : 0);
    },
  });
}

/** Who may read `/metrics` (decision 025). */
export interface MetricsAccess {
  /**
   * The server listens on a loopback address only. Then, if every allowed Host is a loopback
   * name too, `/metrics` needs no token. Default false.
   */
  loopback?: boolean;
  /** Bearer token `/metrics` requires otherwise (`NORTH_METRICS_TOKEN`); unset, it is off (404). */
  token?: string;
}

/** The access rule for a server bound to `host`: what `serve` passes to `buildMcpApp`. */
export function metricsAccessFor(host: string, token: string | undefined): MetricsAccess {
  return { loopback: isLoopbackAddress(host), token };
}

export type MetricsDecision = "open" | "token" | "off";

/**
 * Open on a loopback-only server (bound to loopback, answering only loopback Host names);
 * otherwise behind the token, or off when none is configured.
 */
export function metricsDecision(
  access: MetricsAccess,
  allowedHosts: readonly string[],
): MetricsDecision {
  if (access.loopback && allowedHosts.every(isLoopbackAddress)) return "open";
  return access.token ? "token" : "off";
}

/** Constant-time comparison of an `Authorization` header against `Bearer <token>`. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const given = Buffer.from(header ?? "");
  const expected = Buffer.from(`Bearer ${token}`);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
