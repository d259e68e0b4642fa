import { randomUUID } from "node:crypto";
import { createFingerprinter, type Database, isDatabaseUnavailable } from "@north/db";
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import { createMiddleware } from "hono/factory";
import { HTTPException } from "hono/http-exception";
import { createCapabilities } from "./capabilities/index.ts";
import type { RateLimiter } from "./limiter.ts";
import { describeError, type Logger } from "./logger.ts";
import { LOOPBACK_HOSTS } from "./loopback.ts";
import { createAppMetrics, type MetricsAccess } from "./metrics.ts";
import type { OAuthOptions } from "./oauth.ts";
import type { AuthResolver } from "./principal.ts";
import { MEMBER_SCOPES } from "./principal.ts";
import type { AppEnv } from "./routes/env.ts";
import { buildHealthRoutes } from "./routes/health.ts";
import { buildManifestRoutes } from "./routes/manifest.ts";
import { buildMcpRoutes } from "./routes/mcp.ts";
import { buildMetricsRoutes } from "./routes/metrics.ts";
import { buildResourceMetadataRoutes } from "./routes/resource-metadata.ts";
import { createTenantGate } from "./tenant-gate.ts";
import type { Capability, Embedder } from "./tool-definition.ts";
import { transportGuard } from "./transport-guard.ts";
import { unavailableResponse } from "./unavailable.ts";

export const MAX_BODY_BYTES = 1024 * 1024;
export const DEFAULT_TENANT_CONCURRENCY = { perOrganization: 3, maxWaitMs: 5_000 };
/** Every route but /mcp: console forms, metadata, health. */
export const MAX_FORM_BODY_BYTES = 64 * 1024;
export { READY_CHECK_TIMEOUT_MS } from "./routes/health.ts";

const tooLarge = (): never => {
  throw new HTTPException(413, { message: "Request body too large" });
};

export interface McpAppDeps {
  /** Pool on the app login role (`DATABASE_APP_URL`). */
  db: Database;
  /** Request → principal, or null. Tests inject a synthetic one; production checks tokens. */
  resolvePrincipal: AuthResolver;
  limiter: RateLimiter;
  logger: Logger;
  /** Key for the audit fingerprints (`NORTH_AUDIT_KEY`), at least 16 bytes. */
  auditKey: string;
  /** Milliseconds clock for latencies; `performance.now` by default. */
  clock?: () => number;
  /** Host names the server answers to; default loopback names only. */
  allowedHosts?: readonly string[];
  allowedOrigins?: readonly string[];
  /**
   * OAuth resource-server mode: serves `/.well-known/oauth-protected-resource` and names it in
   * every 401 challenge. (The resolver that verifies JWTs is `createAuthResolver`.)
   */
  oauth?: OAuthOptions;
  /**
   * The capabilities to serve; default `createCapabilities({ embedder, recallTokenBudget })`,
   * built once for the app. A list given here is served as it is built.
   */
  capabilities?: readonly Capability[];
  /**
   * Makes recall semantic when set (built into the default capabilities), and is reported by
   * `/readyz`, `/metrics` and `GET /manifest`; nothing in North downloads a model.
   */
  embedder?: Embedder;
  /** Token budget for fenced memory blocks of the default capabilities; default 1,500. */
  recallTokenBudget?: number;
  /**
   * Tool transactions one organisation may run at once on this replica (default 3; keep it
   * below the pool size), and how long a call over it waits before a rate-limited refusal.
   */
  tenantConcurrency?: { perOrganization: number; maxWaitMs: number };
  /**
   * North's authorization server and its sign-in pages (`createSignIn`): mounted at the root,
   * behind the same Host/Origin guard and form body limit.
   */
  signIn?: { routes: Hono<{ Variables: { requestId: string } }> };
  /**
   * The admin console (`@north/web`), mounted at `/admin` behind the same Host/Origin guard.
   * Passed in by the composition root (the CLI) so this package does not depend on it.
   */
  admin?: {
    fetch(request: Request, env: { requestId: string }): Response | Promise<Response>;
  };
  /**
   * Who may read `GET /metrics` (decision 025): without a token, only a server bound to loopback
   * that answers loopback Host names only; `serve` passes `metricsAccessFor(host, token)`.
   * Default: neither loopback nor a token, so `/metrics` answers 404.
   */
  metrics?: MetricsAccess;
}

export { LOOPBACK_HOSTS };

/** The app pool's `max` (postgres.js), for `/metrics`; undefined when the client does not say. */
function poolSize(db: Database): number | undefined {
  const max = (db as { $client?: { options?: { max?: unknown } } }).$client?.options?.max;
  return typeof max === "number" ? max : undefined;
}

/**
 * The app's last word on a failure: an HTTPException's own status; a database outage, the
 * retryable NORTH_UNAVAILABLE (decision 022); anything else, a bare internal error, logged once.
 */
function answerError(deps: McpAppDeps, capabilities: readonly Capability[]) {
  return (error: Error, c: Context<AppEnv>) => {
    if (error instanceof HTTPException) {
      const response = error.getResponse();
      return c.json({ error: error.message || "error" }, response.status as 400, {
        ...Object.fromEntries(response.headers),
      });
    }
    // The token could not be checked (or another step could not run) because PostgreSQL is
    // unreachable: a retryable NORTH_UNAVAILABLE, not an internal error (decision 022).
    if (isDatabaseUnavailable(error)) {
      deps.logger.warn(
        { requestId: c.get("requestId"), outcome: "unavailable", ...describeError(error) },
        "request refused: the database is unavailable",
      );
      return unavailableResponse(c, capabilities);
    }
    deps.logger.error({ requestId: c.get("requestId"), ...describeError(error) }, "request failed");
    return c.json(
      { jsonrpc: "2.0", error: { code: -32603, message: "Internal error" }, id: null },
      500,
    );
  };
}

/**
 * CORS for browser-based hosts (MCP Inspector's page) on an allowed origin: they may read the
 * OAuth metadata, register, exchange and revoke tokens, and call /mcp.
 */
function browserHostsCors(origins: readonly string[]) {
  return cors({
    origin: [...origins],
    allowMethods: ["GET", "POST", "DELETE", "OPTIONS"],
    // Mcp-Method and Mcp-Name: the headers a 2026-07-28 client sends with every request.
    allowHeaders: [
      "Authorization",
      "Content-Type",
      "Mcp-Protocol-Version",
      "Mcp-Session-Id",
      "Mcp-Method",
      "Mcp-Name",
    ],
    exposeHeaders: ["WWW-Authenticate", "Mcp-Session-Id"],
    maxAge: 600,
  });
}

/** The 401 of a request whose credentials are missing or no longer hold. */
const unauthenticated = (challenge: string) =>
  new HTTPException(401, {
    message: "Unauthorized",
    res: new Response(null, { status: 401, headers: { "WWW-Authenticate": challenge } }),
  });

/**
 * The principal of the request, from `resolvePrincipal` only (a session id never authenticates):
 * a token in the query is refused 400, no principal is 401 with the challenge. `mayRemember`:
 * the route proves a remembered principal itself before answering (POST /mcp, decision 036).
 */
function authentication(
  resolvePrincipal: AuthResolver,
  unauthorized: string,
  options: { mayRemember: boolean },
) {
  return createMiddleware<AppEnv>(async (c, next) => {
    // Most requests have no query at all: only those are parsed.
    const query = c.req.url.includes("?") ? new URL(c.req.url).searchParams : undefined;
    for (const name of ["access_token", "token", "api_key"]) {
      if (query?.has(name)) {
        throw new HTTPException(400, {
          message: "Tokens are accepted only in the Authorization header",
        });
      }
    }
    const principal = await resolvePrincipal(c.req.raw, options);
    if (!principal) throw unauthenticated(unauthorized);
    c.set("principal", principal);
    await next();
  });
}

/**
 * Sets a header on the finished response. Hono's `c.header` after `next()` copies the whole
 * response first (its body becomes a stream), a cost on every call; the copy is kept only for a
 * response whose headers cannot change (one fetched, or `Response.redirect`).
 */
function stampHeader(c: Context<AppEnv>, name: string, value: string): void {
  try {
    c.res.headers.set(name, value);
  } catch {
    c.header(name, value);
  }
}

/**
 * The whole HTTP surface: `POST /mcp` (Streamable HTTP, stateless: a fresh server and transport
 * per request, JSON responses), `GET /manifest`, `/healthz`, `/readyz` and `/metrics`, each
 * concern a sub-app under routes/. This function is the composition root (each capability is
 * built here, once) and the one place that states the middleware order, which is the security
 * boundary: request id → transport guard → CORS → body limit → authentication → routes.
 */
export function buildMcpApp(deps: McpAppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  // Every request's server, the scope gate, step-up and the manifest read this one list.
  const capabilities =
    deps.capabilities ??
    createCapabilities({ embedder: deps.embedder, recallTokenBudget: deps.recallTokenBudget });
  const allowedHosts = deps.allowedHosts ?? LOOPBACK_HOSTS;
  const origins = deps.allowedOrigins ?? [];
  // One registry per app: several apps in one process (the suites) count apart.
  const metrics = createAppMetrics({
    limiter: deps.limiter,
    embedder: deps.embedder,
    poolMax: poolSize(deps.db),
  });
  const metadataUrl = deps.oauth
    ? new URL("/.well-known/oauth-protected-resource", deps.oauth.resourceUrl).toString()
    : undefined;
  const challenge = metadataUrl
    ? `Bearer resource_metadata="${metadataUrl}"`
    : 'Bearer realm="north"';
  // The 401 names the scopes to ask for (RFC 6750 §3): the member scopes; a manager reaches admin
  // by step-up (decision 030).
  const unauthorized = metadataUrl ? `${challenge}, scope="${MEMBER_SCOPES.join(" ")}"` : challenge;

  app.use("*", async (c, next) => {
    const requestId = randomUUID();
    c.set("requestId", requestId);
    await next();
    stampHeader(c, "X-Request-Id", requestId);
  });
  app.onError(answerError(deps, capabilities));

  // 1. The transport guard, on every route, health and metadata included: a rebinding page must
  // learn nothing (SPEC §3).
  app.use("*", transportGuard({ allowedHosts, allowedOrigins: origins }));
  // 2. CORS for exactly the allowed origins (the guard has already refused every other origin).
  if (origins.length > 0) {
    const browserHosts = browserHostsCors(origins);
    for (const path of ["/.well-known/*", "/oauth/oauth2/*", "/oauth/jwks", "/mcp"]) {
      app.use(path, browserHosts);
    }
  }
  // 3. A body limit on every route; /mcp's is larger. Forms and metadata need far less.
  const formLimit = bodyLimit({ maxSize: MAX_FORM_BODY_BYTES, onError: tooLarge });
  app.use("*", async (c, next) => (c.req.path === "/mcp" ? next() : formLimit(c, next)));
  app.post("/mcp", bodyLimit({ maxSize: MAX_BODY_BYTES, onError: tooLarge }));
  // 4. Authentication, on the routes that serve a principal.
  const authenticate = authentication(deps.resolvePrincipal, unauthorized, { mayRemember: false });
  app.post("/mcp", authentication(deps.resolvePrincipal, unauthorized, { mayRemember: true }));
  app.on(["GET", "DELETE"], "/mcp", authenticate);
  app.get("/manifest", authenticate);

  app.route("/", buildHealthRoutes(deps));
  if (deps.oauth) app.route("/", buildResourceMetadataRoutes(deps.oauth));
  app.route("/", buildMetricsRoutes({ access: deps.metrics ?? {}, allowedHosts, metrics }));
  if (deps.signIn) app.route("/", deps.signIn.routes);
  if (deps.admin) {
    const admin = deps.admin;
    // The console logs and shows the same request id this app sends in X-Request-Id.
    const toAdmin = (c: Context<AppEnv>) =>
      admin.fetch(c.req.raw, { requestId: c.get("requestId") });
    app.all("/admin", toAdmin);
    app.all("/admin/*", toAdmin);
  }
  app.route("/", buildManifestRoutes({ capabilities, embedder: deps.embedder, meter: deps }));
  app.route(
    "/",
    buildMcpRoutes({
      db: deps.db,
      limiter: deps.limiter,
      logger: deps.logger,
      fingerprint: createFingerprinter(deps.auditKey),
      now: deps.clock ?? (() => performance.now()),
      capabilities,
      gate: createTenantGate(deps.tenantConcurrency ?? DEFAULT_TENANT_CONCURRENCY),
      metrics,
      maxBodyBytes: MAX_BODY_BYTES,
      challenge,
      metadataUrl,
      lookUp: async (request) => {
        const principal = await deps.resolvePrincipal(request);
        if (!principal) throw unauthenticated(unauthorized);
        return principal;
      },
    }),
  );

  return app;
}
