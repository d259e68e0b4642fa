import { randomUUID } from "node:crypto";
import { checkSubjectLookup, subjectKey } from "@north/agent-runtime";
import {
  createFingerprinter,
  type Database,
  forgetMemories,
  memoriesHeld,
  readAuditForAdmin,
  readProfilesForAdmin,
  recordAudit,
  type Tenant,
  type Tx,
  withTenant,
} from "@north/db";
import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { auditPage } from "./pages/audit.ts";
import { loginPage, refusedPage } from "./pages/login.ts";
import { memoriesPage } from "./pages/memories.ts";
import { profilesPage } from "./pages/profiles.ts";
import { endSession, type Manager, sessionToken, signIn, startSession } from "./session.ts";

export interface AdminAppDeps {
  /** Pool on the app login role: the console has no more rights than the MCP server. */
  db: Database;
  /** The server's audit key: subject lookups use the same fingerprints as the memory store. */
  auditKey: string;
}

type Env = { Variables: { manager: Manager; requestId: string } };

/**
 * The admin console (SPEC §8), server-rendered, meant to be mounted at `/admin` behind the MCP
 * app's transport guard. Every page runs in a tenant transaction as the signed-in manager and
 * writes one audit row; nothing the console shows or records carries a body it did not read.
 */
export function buildAdminApp(deps: AdminAppDeps) {
  const app = new Hono<Env>().basePath("/admin");
  const fingerprint = createFingerprinter(deps.auditKey);

  const requireManager = createMiddleware<Env>(async (c, next) => {
    const token = sessionToken(c);
    if (!token) return c.redirect("/admin/login", 303);
    const result = await signIn(deps.db, token);
    if (!result.ok) {
      if (result.reason === "invalid") {
        endSession(c);
        return c.html(loginPage("Your session ended: sign in again."), 401);
      }
      return c.html(refusedPage(), 403);
    }
    c.set("manager", result.manager);
    c.set("requestId", randomUUID());
    await next();
    return undefined;
  });

  /** Runs a page's reads as the manager, with its audit row in the same transaction. */
  const asManager = <T>(
    c: { get(key: "manager"): Manager; get(key: "requestId"): string },
    tool: string,
    work: (
      tx: Tx,
      tenant: Tenant,
    ) => Promise<{
      value: T;
      outcome: "read" | "forgotten" | "noop" | "rejected";
      target?: string;
      affected?: number;
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
      });
      return result.value;
    });
  };

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
    startSession(c, token);
    return c.redirect("/admin/profiles", 303);
  });
  app.post("/logout", (c) => {
    endSession(c);
    return c.redirect("/admin/login", 303);
  });

  app.use("/profiles", requireManager);
  app.use("/memories", requireManager);
  app.use("/memories/*", requireManager);
  app.use("/audit", requireManager);

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
    return entries ? c.html(profilesPage(entries)) : c.html(refusedPage(), 403);
  });

  app.get("/memories", async (c) => {
    const type = c.req.query("subject_type");
    const id = c.req.query("subject_id");
    if (type === undefined && id === undefined) return c.html(memoriesPage({}));
    const subject = checkSubjectLookup(type, id);
    if (!subject.ok) {
      return c.html(
        memoriesPage({
          subjectType: type,
          subjectId: id,
          message: "Give both a subject type and a subject.",
        }),
        400,
      );
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
    return c.html(memoriesPage({ subjectType: value.type, subjectId: value.id, held }));
  });

  app.post("/memories/forget", async (c) => {
    const form = await c.req.parseBody();
    const type = typeof form.subject_type === "string" ? form.subject_type : undefined;
    const id = typeof form.subject_id === "string" ? form.subject_id : undefined;
    const subject = checkSubjectLookup(type, id);
    if (!subject.ok) {
      return c.html(memoriesPage({ message: "Give both a subject type and a subject." }), 400);
    }
    const value = subject.value;
    const key = subjectKey(value);
    const { forgotten, held } = await asManager(c, "admin_memory_forget", async (tx, tenant) => {
      const result = await forgetMemories(tx, {
        requester: tenant,
        isManager: true,
        target: { subjectFingerprint: fingerprint(key).fingerprint },
      });
      const count = result.outcome === "rejected" ? 0 : result.forgotten;
      const after = await memoriesHeld(tx, {
        organizationId: tenant.organizationId,
        subjectFingerprint: fingerprint(key).fingerprint,
      });
      return {
        value: { forgotten: count, held: after },
        outcome: result.outcome,
        target: key,
        affected: count,
      };
    });
    return c.html(
      memoriesPage({
        subjectType: value.type,
        subjectId: value.id,
        held,
        message: `${forgotten} memories erased: their bodies are gone; tombstones remain.`,
      }),
    );
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
    return events ? c.html(auditPage(events)) : c.html(refusedPage(), 403);
  });

  return app;
}
