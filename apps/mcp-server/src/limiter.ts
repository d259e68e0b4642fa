import { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import type { Principal } from "./principal.ts";
import type { ToolKind } from "./tool-definition.ts";

/**
 * A per-principal budget: the reads and writes of `tools/call`, and `protocol` for every JSON-RPC
 * message (tools/list, prompts/*, ping, initialize, notifications, and each tools/call too).
 */
export type Bucket = ToolKind | "protocol";

/** Protocol messages a principal may send per window unless configured otherwise: generous. */
export const DEFAULT_PROTOCOL_REQUESTS_PER_MINUTE = 600;

export type LimitDecision = { allowed: true } | { allowed: false; retryAfterS: number };

export interface LimiterStatus {
  backend: "memory" | "redis";
  /** True while Redis is unreachable and the in-process insurance limiter is answering. */
  degraded: boolean;
}

export interface RateLimiter {
  /** Takes `points` (default 1; a batch takes one per message) from the principal's budget. */
  consume(principal: Principal, bucket: Bucket, points?: number): Promise<LimitDecision>;
  /**
   * Gives back `points` a call took and should not have: a remembered credential the database
   * then refused (decision 036) must not spend its member's budget.
   */
  refund(principal: Principal, bucket: Bucket, points?: number): Promise<void>;
  status(): LimiterStatus;
  close(): Promise<void>;
}

export interface RateLimiterOptions {
  writesPerMinute: number;
  readsPerMinute: number;
  /** JSON-RPC messages of any method per window; {@link DEFAULT_PROTOCOL_REQUESTS_PER_MINUTE}. */
  protocolRequestsPerMinute?: number;
  /** Length of a budget window. 60 in production; tests shorten it to see a window end. */
  windowSeconds?: number;
  /** With a URL the budgets hold across replicas; without, they are per process. */
  redisUrl?: string;
  /** Prefix for Redis keys. Keys hold only organization and user ids, never a body. */
  keyPrefix?: string;
  /** Told when Redis is lost or comes back, so it can be logged once per change. */
  onRedisStateChange?: (state: "ready" | "unreachable") => void;
}

/**
 * Per-principal budgets for reads, writes and protocol messages with `rate-limiter-flexible`.
 * With Redis, each limiter carries an in-memory insurance limiter: when Redis cannot answer,
 * calls are limited per process instead of failing, and `status()` reports the degradation for
 * `/readyz`.
 */
export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const duration = options.windowSeconds ?? 60;
  const prefix = options.keyPrefix ?? "north:rl";
  const budgets: Record<Bucket, number> = {
    read: options.readsPerMinute,
    write: options.writesPerMinute,
    protocol: options.protocolRequestsPerMinute ?? DEFAULT_PROTOCOL_REQUESTS_PER_MINUTE,
  };
  const memory = (kind: Bucket) =>
    new RateLimiterMemory({ keyPrefix: `${prefix}:${kind}`, points: budgets[kind], duration });

  let redis: Redis | undefined;
  let limiters: Record<Bucket, RateLimiterMemory | RateLimiterRedis>;
  if (options.redisUrl) {
    const client = new Redis(options.redisUrl, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2_000,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    });
    let reported: "ready" | "unreachable" | undefined;
    const report = (state: "ready" | "unreachable") => {
      if (reported !== state) options.onRedisStateChange?.(state);
      reported = state;
    };
    client.on("ready", () => report("ready"));
    client.on("error", () => report("unreachable"));
    client.on("close", () => report("unreachable"));
    client.on("end", () => report("unreachable"));
    redis = client;
    const onRedis = (kind: Bucket) =>
      new RateLimiterRedis({
        storeClient: client,
        keyPrefix: `${prefix}:${kind}`,
        points: budgets[kind],
        duration,
        rejectIfRedisNotReady: true,
        insuranceLimiter: memory(kind),
      });
    limiters = { read: onRedis("read"), write: onRedis("write"), protocol: onRedis("protocol") };
  } else {
    limiters = { read: memory("read"), write: memory("write"), protocol: memory("protocol") };
  }

  return {
    async consume(principal, bucket, points = 1) {
      try {
        await limiters[bucket].consume(`${principal.organizationId}:${principal.userId}`, points);
        return { allowed: true };
      } catch (refusal) {
        if (refusal instanceof RateLimiterRes) {
          return {
            allowed: false,
            retryAfterS: Math.max(1, Math.ceil(refusal.msBeforeNext / 1000)),
          };
        }
        throw refusal;
      }
    },
    async refund(principal, bucket, points = 1) {
      await limiters[bucket]
        .reward(`${principal.organizationId}:${principal.userId}`, points)
        .catch(() => undefined);
    },
    status() {
      if (!redis) return { backend: "memory", degraded: false };
      return { backend: "redis", degraded: redis.status !== "ready" };
    },
    async close() {
      if (redis) redis.disconnect();
    },
  };
}
