import type { Database } from "@north/db";
import { sql } from "drizzle-orm";
import { Hono } from "hono";
import type { RateLimiter } from "../limiter.ts";
import type { Embedder } from "../tool-definition.ts";
import type { AppEnv } from "./env.ts";

/** `/readyz` reports the database unreachable when `select 1` has not answered by then. */
export const READY_CHECK_TIMEOUT_MS = 2_000;

export interface HealthRoutesOptions {
  db: Database;
  limiter: RateLimiter;
  embedder?: Embedder;
}

/** `select 1`, bounded: while PostgreSQL is unreachable it answers within the timeout. */
async function databaseState(db: Database): Promise<"ok" | "unreachable"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    db.execute(sql`select 1`).then(
      () => "ok" as const,
      () => "unreachable" as const,
    ),
    new Promise<"unreachable">((resolve) => {
      timer = setTimeout(() => resolve("unreachable"), READY_CHECK_TIMEOUT_MS);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** `GET /healthz` (the process answers) and `GET /readyz` (what it depends on answers). */
export function buildHealthRoutes(options: HealthRoutesOptions) {
  const app = new Hono<AppEnv>();

  app.get("/healthz", (c) => c.json({ status: "ok" }));

  app.get("/readyz", async (c) => {
    const limiter = options.limiter.status();
    const database = await databaseState(options.db);
    // A failing embedder degrades recall to full text; it never makes North unavailable.
    const embedder = options.embedder?.status?.();
    const status =
      database !== "ok"
        ? "unavailable"
        : limiter.degraded || embedder?.state === "degraded"
          ? "degraded"
          : "ok";
    return c.json(
      {
        status,
        database,
        limiter: {
          backend: limiter.backend,
          redis:
            limiter.backend === "redis" ? (limiter.degraded ? "unreachable" : "ok") : undefined,
          serving: limiter.degraded ? "in-process insurance limiter" : limiter.backend,
        },
        embedder: options.embedder
          ? { state: embedder?.state ?? "ok", class: embedder?.class }
          : undefined,
      },
      database === "ok" ? 200 : 503,
    );
  });

  return app;
}
