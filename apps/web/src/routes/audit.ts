import { readAuditForAdmin } from "@north/db";
import type { ConsoleApp, ConsoleContext } from "../context.ts";
import { auditPage } from "../pages/audit.ts";
import { refusedPage } from "../pages/login.ts";

/** Audit (SPEC §8): the ledger's recent events, no bodies. */
export function auditRoutes(app: ConsoleApp, ctx: ConsoleContext): void {
  app.get("/audit", async (c) => {
    const events = await ctx.asManager(c, "admin_audit", async (tx, tenant) => {
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
}
