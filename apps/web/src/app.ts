import { randomUUID } from "node:crypto";
import { checkSubjectLookup, subjectKey } from "@north/agent-runtime";
import {
  createFingerprinter,
  type Database,
  forgetMemories,
  listGrants,
  members,
  memoriesHeld,
  readAuditForAdmin,
  readProfilesForAdmin,
  recordAudit,
  revokeGrant,
  type Tenant,
  type Tx,
  withTenant,
} from "@north/db";
import { eq } from "drizzle-orm";
import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { secureHeaders } from "hono/secure-headers";
import { SCRIPT, STYLESHEET } from "./assets.ts";
import { type ConsoleLogger, handleConsoleError } from "./errors.ts";
import { auditPage } from "./pages/audit.ts";
import { connectionsPage } from "./pages/connections.ts";
import { forbiddenFormPage, notFoundPage } from "./pages/error.ts";
import { loginPage, refusedPage } from "./pages/login.ts";
import { memoriesPage } from "./pages/memories.ts";
import { profilesPage } from "./pages/profiles.ts";
import {
  CSRF_FIELD,
  clearSessionCookie,
  csrfMatches,
  currentSession,
  DEFAULT_TIMEOUTS,
  endSession,
  type Manager,
  type SessionTimeouts,
  signIn,
  startSession,
} from "./session.ts";

export interface AdminAppDeps {
  /** Pool on the app login role: the console has no more rights than the MCP server. */
  db: Database;
  /** The server's audit key: subject lookups use the same fingerprints as the memory store. */
  auditKey: string;
  /** The server's logger: console failures are logged here, with the request id. */
  logger: ConsoleLogger;
  /** `NORTH_PUBLIC_URL`: when https, session cookies are `Secure` even behind a TLS proxy. */
  publicUrl?: string;
  /** Session idle and absolute lifetimes; 30 minutes and 8 hours by default. */
  sessionTimeouts?: Partial<SessionTimeouts>;
}

/** The mounting app may pass its request id, so its logs, header and this page agree. */
type Env = {
  Bindings: { requestId?: string } | undefined;
  Variables: { manager: Manager; requestId: string };
};

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
  const fingerprint = createFingerprinter(deps.auditKey);
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

  /** Runs a page's work as the manager, with its audit row in the same transaction. */
  const asManager = <T>(
    c: { get(key: "manager"): Manager; get(key: "requestId"): string },
    tool: string,
    work: (
      tx: Tx,
      tenant: Tenant,
    ) => Promise<{
      value: T;
      outcome: "read" | "forgotten" | "noop" | "rejected" | "revoked";
      target?: string;
      affected?: number;
      reason?: string;
    }>,
  ) => {
    const manager = c.get("manager");
    const tenant = { organizationId: manager.organizationId, userId: manager.userId };
    return withTenant(deps.db, tenant, async (tx) => {
      const result = await work(tx, tenant);
      await recordAudit(tx, {
        tool,
        outcome: result.outcome,
        tokenId: manager.tokenId,
        requestId: c.get("requestId"),
        target: result.target === undefined ? undefined : fingerprint(result.target),
        affected: result.affected,
        reason: result.reason,
      });
      return result.value;
    });
  };

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
    if (!result.ok) return c.html(refusedPage(), 403);
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

  for (const path of [
    "/logout",
    "/profiles",
    "/memories",
    "/memories/*",
    "/connections",
    "/connections/*",
    "/audit",
  ]) {
    app.use(path, requireManager);
  }

  app.post("/logout", async (c) => {
    await endSession(c, deps.db, c.get("manager"));
    return c.redirect("/admin/login", 303);
  });

  app.get("/profiles", async (c) => {
    const entries = await asManager(c, "admin_profiles", async (tx, tenant) => {
      const result = await readProfilesForAdmin(tx, {
        organizationId: tenant.organizationId,
        requesterId: tenant.userId,
      });
      return result.ok
        ? { value: result.entries, outcome: "read" as const }
        : { value: null, outcome: "rejected" as const };
    });
    const csrf = c.get("manager").csrfToken;
    return entries ? c.html(profilesPage(entries, csrf)) : c.html(refusedPage(), 403);
  });

  // A GET never searches, whatever its query says: subject names stay out of URLs (SPEC §8).
  app.get("/memories", (c) => {
    const erased = c.req.query("erased");
    const message = /^\d{1,6}$/.test(erased ?? "")
      ? `${erased} memories erased: their bodies are gone; tombstones remain.`
      : undefined;
    return c.html(memoriesPage({ message }, c.get("manager").csrfToken));
  });

  app.post("/memories", async (c) => {
    const csrf = c.get("manager").csrfToken;
    const form = await c.req.parseBody();
    const type = typeof form.subject_type === "string" ? form.subject_type : undefined;
    const id = typeof form.subject_id === "string" ? form.subject_id : undefined;
    const subject = checkSubjectLookup(type, id);
    if (!subject.ok) {
      const message = "Give both a subject type and a subject.";
      return c.html(memoriesPage({ subjectType: type, subjectId: id, message }, csrf), 400);
    }
    const value = subject.value;
    const held = await asManager(c, "admin_memory_held", async (tx, tenant) => ({
      value: await memoriesHeld(tx, {
        organizationId: tenant.organizationId,
        subjectFingerprint: fingerprint(subjectKey(value)).fingerprint,
      }),
      outcome: "read" as const,
      target: subjectKey(value),
    }));
    return c.html(memoriesPage({ subjectType: value.type, subjectId: value.id, held }, csrf));
  });

  // Post/redirect/get: the redirect carries only the count, never the subject.
  app.post("/memories/forget", async (c) => {
    const form = await c.req.parseBody();
    const type = typeof form.subject_type === "string" ? form.subject_type : undefined;
    const id = typeof form.subject_id === "string" ? form.subject_id : undefined;
    const subject = checkSubjectLookup(type, id);
    if (!subject.ok) {
      const message = "Give both a subject type and a subject.";
      return c.html(memoriesPage({ message }, c.get("manager").csrfToken), 400);
    }
    const key = subjectKey(subject.value);
    const forgotten = await asManager(c, "admin_memory_forget", async (tx, tenant) => {
      const result = await forgetMemories(tx, {
        requester: tenant,
        isManager: true,
        target: { subjectFingerprint: fingerprint(key).fingerprint },
      });
      const count = result.outcome === "rejected" ? 0 : result.forgotten;
      return { value: count, outcome: result.outcome, target: key, affected: count };
    });
    return c.redirect(`/admin/memories?erased=${forgotten}`, 303);
  });

  app.get("/connections", async (c) => {
    const rows = await asManager(c, "admin_connections", async (tx, tenant) => {
      const grants = await listGrants(tx, { organizationId: tenant.organizationId });
      const emails = new Map(
        (
          await tx
            .select({ userId: members.userId, email: members.email })
            .from(members)
            .where(eq(members.organizationId, tenant.organizationId))
        ).map((m) => [m.userId, m.email]),
      );
      return {
        value: grants.map((g) => ({ ...g, memberEmail: emails.get(g.userId) ?? "" })),
        outcome: "read" as const,
      };
    });
    const revoked = c.req.query("revoked") === "1" ? "The app was disconnected." : undefined;
    return c.html(connectionsPage(rows, c.get("manager").csrfToken, revoked));
  });

  // Post/redirect/get; the grant must belong to this organisation (RLS on members).
  app.post("/connections/revoke", async (c) => {
    const form = await c.req.parseBody();
    const grantId = typeof form.grant_id === "string" ? form.grant_id : "";
    const revoked = await asManager(c, "grant_revoke", async (tx, tenant) => {
      const grant = /^[0-9a-f-]{36}$/i.test(grantId)
        ? await revokeGrant(tx, grantId, tenant.organizationId)
        : null;
      return grant
        ? { value: true, outcome: "revoked" as const, reason: "manager", target: grant.clientId }
        : { value: false, outcome: "rejected" as const, reason: "unknown_grant" };
    });
    if (!revoked) return c.html(notFoundPage(), 404);
    return c.redirect("/admin/connections?revoked=1", 303);
  });

  app.get("/audit", async (c) => {
    const events = await asManager(c, "admin_audit", async (tx, tenant) => {
      const result = await readAuditForAdmin(tx, {
        organizationId: tenant.organizationId,
        requesterId: tenant.userId,
        limit: 200,
      });
      return result.ok
        ? { value: result.events, outcome: "read" as const }
        : { value: null, outcome: "rejected" as const };
    });
    const csrf = c.get("manager").csrfToken;
    return events ? c.html(auditPage(events, csrf)) : c.html(refusedPage(), 403);
  });

  return app;
}
