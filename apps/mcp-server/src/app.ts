import { randomUUID } from "node:crypto";
import { createFingerprinter, type Database, isDatabaseUnavailable, TOKEN_PREFIX } from "@north/db";
import { sql } from "drizzle-orm";
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import { createMiddleware } from "hono/factory";
import { HTTPException } from "hono/http-exception";
import { bearerToken } from "./auth.ts";
import { authorize, createCapabilities } from "./capabilities/index.ts";
import type { RateLimiter } from "./limiter.ts";
import { describeError, type Logger } from "./logger.ts";
import { LOOPBACK_HOSTS } from "./loopback.ts";
import { composeManifest } from "./manifest.ts";
import { bearerMatches, createAppMetrics, type MetricsAccess, metricsDecision } from "./metrics.ts";
import { type OAuthOptions, protectedResourceMetadata } from "./oauth.ts";
import type { AuthResolver, Principal } from "./principal.ts";
import { MEMBER_SCOPES } from "./principal.ts";
import { meterManifest, meterPost } from "./protocol-meter.ts";
import { createMcpHttpEntry, createMcpServer } from "./server.ts";
import { stepUpScopes } from "./step-up.ts";
import { createTenantGate } from "./tenant-gate.ts";
import type { Capability, Embedder } from "./tool-definition.ts";
import { transportGuard } from "./transport-guard.ts";
import { unavailableResponse } from "./unavailable.ts";

export const MAX_BODY_BYTES = 1024 * 1024;
export const DEFAULT_TENANT_CONCURRENCY = { perOrganization: 3, maxWaitMs: 5_000 };
/** Every route but /mcp: console forms, metadata, health. */
export const MAX_FORM_BODY_BYTES = 64 * 1024;
/** `/readyz` reports the database unreachable when `select 1` has not answered by then. */
export const READY_CHECK_TIMEOUT_MS = 2_000;

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
 * For a tools/call or prompts/get (or a batch holding one) naming a tool or prompt of a
 * capability the principal lacks scopes for: the scopes needed, for a 403 (SPEC §3).
 */
function missingScopes(
  principal: Principal,
  body: unknown,
  capabilities: readonly Capability[],
): { scopes: readonly string[]; id: unknown } | undefined {
  for (const message of Array.isArray(body) ? body : [body]) {
    if (!message || typeof message !== "object") continue;
    const { method, params, id } = message as {
      method?: unknown;
      params?: { name?: unknown };
      id?: unknown;
    };
    if (method !== "tools/call" && method !== "prompts/get") continue;
    if (typeof params?.name !== "string") continue;
    const decision = authorize(principal, method, params.name, capabilities);
    if (!decision.allowed && decision.reason === "scope_off") {
      return { scopes: decision.scopes, id: id ?? null };
    }
  }
  return undefined;
}

type Env = { Variables: { requestId: string; principal: Principal } };

/**
 * The whole HTTP surface: `POST /mcp` (Streamable HTTP, stateless: a fresh server and transport
 * per request, JSON responses), `GET /manifest`, `/healthz` and `/readyz`. Identity comes only
 * from `resolvePrincipal`; a session id never authenticates.
 */
export function buildMcpApp(deps: McpAppDeps): Hono<Env> {
  const app = new Hono<Env>();
  // The composition root of the HTTP server: each capability is built here, once, with what it
  // needs; every request's server, the scope gate and the manifest read this one list.
  const capabilities =
    deps.capabilities ??
    createCapabilities({ embedder: deps.embedder, recallTokenBudget: deps.recallTokenBudget });
  const fingerprint = createFingerprinter(deps.auditKey);
  const gate = createTenantGate(deps.tenantConcurrency ?? DEFAULT_TENANT_CONCURRENCY);
  const now = deps.clock ?? (() => performance.now());
  const allowedHosts = deps.allowedHosts ?? LOOPBACK_HOSTS;
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
    c.set("requestId", randomUUID());
    await next();
    c.header("X-Request-Id", c.get("requestId"));
  });

  app.onError((error, c) => {
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
  });

  // Every route, health and metadata included: a rebinding page must learn nothing (SPEC §3).
  app.use(
    "*",
    transportGuard({
      allowedHosts,
      allowedOrigins: deps.allowedOrigins ?? [],
    }),
  );
  // Browser-based hosts (MCP Inspector's page) on an allowed origin may read the OAuth metadata,
  // register, exchange and revoke tokens, and call /mcp: CORS for exactly those origins (the
  // guard above has already refused every other origin).
  const origins = deps.allowedOrigins ?? [];
  if (origins.length > 0) {
    const browserHosts = cors({
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
    for (const path of ["/.well-known/*", "/oauth/oauth2/*", "/oauth/jwks", "/mcp"]) {
      app.use(path, browserHosts);
    }
  }
  // A body limit on every route; /mcp raises it below. Forms and metadata need far less.
  const formLimit = bodyLimit({ maxSize: MAX_FORM_BODY_BYTES, onError: tooLarge });
  app.use("*", async (c, next) => (c.req.path === "/mcp" ? next() : formLimit(c, next)));

  app.get("/healthz", (c) => c.json({ status: "ok" }));

  if (deps.oauth) {
    const metadata = protectedResourceMetadata(deps.oauth);
    // RFC 9728 §3.1: at the root, and with the resource's path appended.
    const resourcePath = new URL(deps.oauth.resourceUrl).pathname.replace(/\/$/, "");
    app.get("/.well-known/oauth-protected-resource", (c) => c.json(metadata));
    if (resourcePath)
      app.get(`/.well-known/oauth-protected-resource${resourcePath}`, (c) => c.json(metadata));
  }

  app.get("/readyz", async (c) => {
    const limiter = deps.limiter.status();
    // Bounded: while PostgreSQL is unreachable the probe answers within READY_CHECK_TIMEOUT_MS.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const database = await Promise.race([
      deps.db.execute(sql`select 1`).then(
        () => "ok" as const,
        () => "unreachable" as const,
      ),
      new Promise<"unreachable">((resolve) => {
        timer = setTimeout(() => resolve("unreachable"), READY_CHECK_TIMEOUT_MS);
      }),
    ]).finally(() => clearTimeout(timer));
    // A failing embedder degrades recall to full text; it never makes North unavailable.
    const embedder = deps.embedder?.status?.();
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
        embedder: deps.embedder
          ? { state: embedder?.state ?? "ok", class: embedder?.class }
          : undefined,
      },
      database === "ok" ? 200 : 503,
    );
  });

  // Prometheus text format; behind the Host guard above like every route, and a token outside
  // loopback. Off (404) outside loopback when no token is configured.
  const metricsAccess = metricsDecision(deps.metrics ?? {}, allowedHosts);
  app.get("/metrics", async (c) => {
    if (metricsAccess === "off") return c.notFound();
    const token = deps.metrics?.token;
    if (
      metricsAccess === "token" &&
      token &&
      !bearerMatches(c.req.header("authorization"), token)
    ) {
      throw new HTTPException(401, {
        message: "Unauthorized",
        res: new Response(null, {
          status: 401,
          headers: { "WWW-Authenticate": 'Bearer realm="north-metrics"' },
        }),
      });
    }
    return c.body(await metrics.registry.metrics(), 200, {
      "Content-Type": metrics.registry.contentType,
      "Cache-Control": "no-store",
    });
  });

  const mcp = createMcpHttpEntry({
    maxBodyBytes: MAX_BODY_BYTES,
    onerror: (error) =>
      deps.logger.debug({ ...describeError(error) }, "mcp request refused by the protocol layer"),
  });

  const authenticate = createMiddleware<Env>(async (c, next) => {
    const url = new URL(c.req.url);
    for (const name of ["access_token", "token", "api_key"]) {
      if (url.searchParams.has(name)) {
        throw new HTTPException(400, {
          message: "Tokens are accepted only in the Authorization header",
        });
      }
    }
    const principal = await deps.resolvePrincipal(c.req.raw);
    if (!principal) {
      throw new HTTPException(401, {
        message: "Unauthorized",
        res: new Response(null, { status: 401, headers: { "WWW-Authenticate": unauthorized } }),
      });
    }
    c.set("principal", principal);
    await next();
  });

  if (deps.signIn) app.route("/", deps.signIn.routes);

  if (deps.admin) {
    const admin = deps.admin;
    // The console logs and shows the same request id this app sends in X-Request-Id.
    const toAdmin = (c: Context<Env>) => admin.fetch(c.req.raw, { requestId: c.get("requestId") });
    app.all("/admin", toAdmin);
    app.all("/admin/*", toAdmin);
  }

  // The manifest carries what tools/list does, so it costs a protocol point as that does.
  app.get("/manifest", authenticate, (c) =>
    meterManifest(c.get("principal"), c.get("requestId"), deps).then((refused) => {
      if (refused) return refused;
      const embedder = deps.embedder?.status?.();
      return c.json(
        composeManifest(c.get("principal"), capabilities, {
          embedder: Boolean(deps.embedder),
          embedderFailure: embedder?.state === "degraded" ? embedder.class : undefined,
        }),
      );
    }),
  );

  app.post(
    "/mcp",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: tooLarge,
    }),
    authenticate,
    async (c) => {
      const principal = c.get("principal");
      let body: unknown;
      try {
        body = JSON.parse(await c.req.text());
      } catch {
        // A body that does not parse is one message all the same.
        const refused = await meterPost(null, principal, c.get("requestId"), deps);
        if (refused) return refused;
        return c.json(
          { jsonrpc: "2.0", error: { code: -32700, message: "Parse error" }, id: null },
          400,
        );
      }
      // Every message counts against the principal's protocol budget, before any server work.
      const refused = await meterPost(body, principal, c.get("requestId"), deps);
      if (refused) return refused;
      const missing = missingScopes(principal, body, capabilities);
      if (missing) {
        const scope = missing.scopes.join(" ");
        return c.json(
          {
            jsonrpc: "2.0",
            error: { code: -32003, message: `Insufficient scope: this call needs ${scope}` },
            id: missing.id,
          },
          403,
          { "WWW-Authenticate": `${challenge}, error="insufficient_scope", scope="${scope}"` },
        );
      }
      // Step-up (MCP 2025-11-25): only a host holding an OAuth token can re-authorize; an API
      // token's scopes are what its holder chose, so its calls run as they are.
      const reauthorizes = metadataUrl && !bearerToken(c.req.raw)?.startsWith(TOKEN_PREFIX);
      const stepUp = reauthorizes
        ? await stepUpScopes(principal, body, {
            db: deps.db,
            capabilities,
            fingerprintSubject: (canonical) => fingerprint(canonical).fingerprint,
          })
        : undefined;
      if (stepUp) {
        const scope = stepUp.scopes.join(" ");
        return c.json(
          {
            jsonrpc: "2.0",
            error: { code: -32003, message: `Insufficient scope: this call needs ${scope}` },
            id: stepUp.id,
          },
          403,
          {
            "WWW-Authenticate": `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${metadataUrl}"`,
          },
        );
      }
      const build = () =>
        createMcpServer(
          principal,
          {
            db: deps.db,
            limiter: deps.limiter,
            logger: deps.logger,
            fingerprint,
            now,
            capabilities,
            gate,
            metrics,
          },
          { requestId: c.get("requestId") },
        );
      return mcp.serve(c.req.raw, body, build);
    },
  );

  // Stateless server: no standalone SSE stream to open and no session to end (MCP transports spec).
  const notAllowed = () =>
    new Response(
      JSON.stringify({
        jsonrpc: "2.0",
        error: { code: -32000, message: "Method not allowed" },
        id: null,
      }),
      { status: 405, headers: { Allow: "POST", "Content-Type": "application/json" } },
    );
  app.get("/mcp", authenticate, notAllowed);
  app.delete("/mcp", authenticate, notAllowed);

  return app;
}
