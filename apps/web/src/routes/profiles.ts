import { readProfilesForAdmin } from "@north/db";
import type { ConsoleApp, ConsoleContext } from "../context.ts";
import { refusedPage } from "../pages/login.ts";
import { profilesPage } from "../pages/profiles.ts";

/** Working profiles (SPEC §8): every member's answers, as the assistant transcribed them. */
export function profileRoutes(app: ConsoleApp, ctx: ConsoleContext): void {
  app.get("/profiles", async (c) => {
    const entries = await ctx.asManager(c, "admin_profiles", async (tx, tenant) => {
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
}
