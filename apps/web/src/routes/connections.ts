import { listGrants, members, revokeGrant } from "@north/db";
import { eq } from "drizzle-orm";
import type { ConsoleApp, ConsoleContext } from "../context.ts";
import { connectionsPage } from "../pages/connections.ts";
import { notFoundPage } from "../pages/error.ts";

/** Connected apps (SPEC §3a): the members' grants, with revoke. */
export function connectionRoutes(app: ConsoleApp, ctx: ConsoleContext): void {
  app.get("/connections", async (c) => {
    const rows = await ctx.asManager(c, "admin_connections", async (tx, tenant) => {
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
    const revoked = await ctx.asManager(c, "grant_revoke", async (tx, tenant) => {
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
}
