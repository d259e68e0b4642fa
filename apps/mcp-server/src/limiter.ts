import { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import type { Principal } from "./principal.ts";
import type { ToolKind } from "./tool-definition.ts";

export type LimitDecision = { allowed: true } | { allowed: false; retryAfterS: number };

export interface LimiterStatus {
  backend: "memory" | "redis";
  /** True while Redis is unreachable and the in-process insurance limiter is answering. */
  degraded: boolean;
}

export interface RateLimiter {
  consume(principal: Principal, kind: ToolKind): Promise<LimitDecision>;
  status(): LimiterStatus;
  close(): Promise<void>;
}

export interface RateLimiterOptions {
  writesPerMinute: number;
  readsPerMinute: number;
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
 * Per-principal budgets for reads and writes with `rate-limiter-flexible`. With Redis, each
 * limiter carries an in-memory insurance limiter: when Redis cannot answer, calls are limited per
 * process instead of failing, and `status()` reports the degradation for `/readyz`.
 */
export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const duration = options.windowSeconds ?? 60;
  const prefix = options.keyPrefix ?? "north:rl";
  const budgets: Record<ToolKind, number> = {
    read: options.readsPerMinute,
    write: options.writesPerMinute,
  };
  const memory = (kind: ToolKind) =>
    new RateLimiterMemory({ keyPrefix: `${prefix}:${kind}`, points: budgets[kind], duration });

  let redis: Redis | undefined;
  let limiters: Record<ToolKind, RateLimiterMemory | RateLimiterRedis>;
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
    const onRedis = (kind: ToolKind) =>
      new RateLimiterRedis({
        storeClient: client,
        keyPrefix: `${prefix}:${kind}`,
        points: budgets[kind],
        duration,
        rejectIfRedisNotReady: true,
        insuranceLimiter: memory(kind),
      });
    limiters = { read: onRedis("read"), write: onRedis("write") };
  } else {
    limiters = { read: memory("read"), write: memory("write") };
  }

  return {
    async consume(principal, kind) {
      try {
        await limiters[kind].consume(`${principal.organizationId}:${principal.userId}`);
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
    status() {
      if (!redis) return { backend: "memory", degraded: false };
      return { backend: "redis", degraded: redis.status !== "ready" };
    },
    async close() {
      if (redis) redis.disconnect();
    },
  };
}
