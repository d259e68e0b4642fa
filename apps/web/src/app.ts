import { randomUUID } from "node:crypto";
import { recordAudit, withTenant } from "@north/db";
import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { secureHeaders } from "hono/secure-headers";
import { SCRIPT, STYLESHEET } from "./assets.ts";
import { type AdminAppDeps, createConsoleContext, type Env } from "./context.ts";
import { handleConsoleError } from "./errors.ts";
import { forbiddenFormPage, notFoundPage } from "./pages/error.ts";
import { loginPage, refusedPage } from "./pages/login.ts";
import { auditRoutes } from "./routes/audit.ts";
import { connectionRoutes } from "./routes/connections.ts";
import { matterRoutes } from "./routes/matters.ts";
import { memberRoutes } from "./routes/members.ts";
import { memoryRoutes } from "./routes/memories.ts";
import { profileRoutes } from "./routes/profiles.ts";
import {
  CSRF_FIELD,
  clearSessionCookie,
  csrfMatches,
  currentSession,
  DEFAULT_TIMEOUTS,
  endSession,
  signIn,
  startSession,
} from "./session.ts";

export type { AdminAppDeps } from "./context.ts";

/** Every console response (SPEC §8): no framing, no foreign forms or scripts, no caching. */
const securityHeaders = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'self'"],
    frameAncestors: ["'none'"],
    formAction: ["'self'"],
    baseUri: ["'none'"],
    objectSrc: ["'none'"],
  },
  xFrameOptions: "DENY",
  referrerPolicy: "no-referrer",
});

/**
 * The admin console (SPEC §8), server-rendered, meant to be mounted at `/admin` behind the MCP
 * app's transport guard. A manager signs in with an `admin` token once; from then on a
 * server-side session (session.ts) identifies them, and every state-changing POST must carry
 * the session's CSRF token. Every page runs in a tenant transaction as the signed-in manager and
 * writes one audit row; nothing the console shows, logs or records carries a body it did not read.
 */
export function buildAdminApp(deps: AdminAppDeps) {
  const app = new Hono<Env>().basePath("/admin");
  const ctx = createConsoleContext(deps);
  const timeouts = { ...DEFAULT_TIMEOUTS, ...deps.sessionTimeouts };

  app.use("*", async (c, next) => {
    c.set("requestId", c.env?.requestId ?? randomUUID());
    await next();
    c.header("Cache-Control", "no-store");
  });
  app.use("*", securityHeaders);
  app.onError(handleConsoleError(deps.logger));

  /** A live session, and on a POST the session's CSRF token; anything else changes nothing. */
  const requireManager = createMiddleware<Env>(async (c, next) => {
    const manager = await currentSession(c, deps.db);
    if (!manager) {
      clearSessionCookie(c);
      if (c.req.method === "GET") return c.redirect("/admin/login", 303);
      return c.html(loginPage("Your session ended: sign in again."), 401);
    }
    if (c.req.method === "POST") {
      const form = await c.req.parseBody();
      if (!csrfMatches(manager, form[CSRF_FIELD])) return c.html(forbiddenFormPage(), 403);
    }
    c.set("manager", manager);
    await next();
    return undefined;
  });

  // Content types set with c.header, not a headers record: under @hono/node-server a record
  // is rebuilt when the outer app adds X-Request-Id, dropping the security headers set since.
  app.get("/console.css", (c) => {
    c.header("Content-Type", "text/css; charset=utf-8");
    return c.body(STYLESHEET);
  });
  app.get("/console.js", (c) => {
    c.header("Content-Type", "text/javascript; charset=utf-8");
    return c.body(SCRIPT);
  });
  app.notFound((c) => c.html(notFoundPage(), 404));
  app.get("/", (c) => c.redirect("/admin/profiles", 303));
  app.get("/login", (c) => c.html(loginPage()));
  app.post("/login", async (c) => {
    const form = await c.req.parseBody();
    const token = typeof form.token === "string" ? form.token.trim() : "";
    const result = await signIn(deps.db, token);
    if (!result.ok && result.reason === "invalid") {
      return c.html(loginPage("That token is not valid (unknown, expired or revoked)."), 401);
    }
    if (!result.ok) {
      await withTenant(deps.db, result, (tx) =>
        recordAudit(tx, {
          tool: "admin_sign_in",
          outcome: "refused",
          reason: result.reason,
          tokenId: result.tokenId,
          requestId: c.get("requestId"),
        }),
      );
      return c.html(refusedPage(), 403);
    }
    await startSession(c, deps.db, result, { timeouts, publicUrl: deps.publicUrl }, (tx) =>
      recordAudit(tx, {
        tool: "admin_sign_in",
        outcome: "created",
        tokenId: result.tokenId,
        requestId: c.get("requestId"),
      }),
    );
    return c.redirect("/admin/profiles", 303);
  });

  // Everything but sign-in and the assets needs a live session (and, on a POST, its CSRF token).
  const open = new Set([
    "/admin",
    "/admin/",
    "/admin/login",
    "/admin/console.css",
    "/admin/console.js",
  ]);
  app.use("*", async (c, next) => (open.has(c.req.path) ? next() : requireManager(c, next)));

  app.post("/logout", async (c) => {
    const manager = c.get("manager");
    await endSession(c, deps.db, manager, (tx, ended) =>
      recordAudit(tx, {
        tool: "admin_sign_out",
        outcome: ended ? "revoked" : "noop",
        tokenId: manager.tokenId,
        requestId: c.get("requestId"),
      }),
    );
    return c.redirect("/admin/login", 303);
  });

  memberRoutes(app, ctx);
  profileRoutes(app, ctx);
  memoryRoutes(app, ctx);
  matterRoutes(app, ctx);
  connectionRoutes(app, ctx);
  auditRoutes(app, ctx);

  return app;
}
