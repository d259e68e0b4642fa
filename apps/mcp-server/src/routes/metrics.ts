import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { type AppMetrics, bearerMatches, type MetricsAccess, metricsDecision } from "../metrics.ts";
import type { AppEnv } from "./env.ts";

export interface MetricsRoutesOptions {
  /** Who may read it (decision 025). */
  access: MetricsAccess;
  /** The Host names the app answers to: loopback-only is what lets `/metrics` go tokenless. */
  allowedHosts: readonly string[];
  metrics: AppMetrics;
}

/**
 * `GET /metrics`, Prometheus text format; behind the Host guard like every route, and a token
 * outside loopback. Off (404) outside loopback when no token is configured.
 */
export function buildMetricsRoutes(options: MetricsRoutesOptions) {
  const app = new Hono<AppEnv>();
  const decision = metricsDecision(options.access, options.allowedHosts);
  const { registry } = options.metrics;

  app.get("/metrics", async (c) => {
    if (decision === "off") return c.notFound();
    const token = options.access.token;
    if (decision === "token" && token && !bearerMatches(c.req.header("authorization"), token)) {
      throw new HTTPException(401, {
        message: "Unauthorized",
        res: new Response(null, {
          status: 401,
          headers: { "WWW-Authenticate": 'Bearer realm="north-metrics"' },
        }),
      });
    }
    return c.body(await registry.metrics(), 200, {
      "Content-Type": registry.contentType,
      "Cache-Control": "no-store",
    });
  });

  return app;
}
