import { readMemberOverview, readProfilesForAdmin } from "@north/db";
import type { ConsoleApp, ConsoleContext } from "../context.ts";
import { refusedPage } from "../pages/login.ts";
import { profilesPage } from "../pages/profiles.ts";

/**
 * Working profiles (SPEC §8): every member's answers, as the assistant transcribed them, and
 * every member without answers as not onboarded, so nobody is missing from the page.
 */
export function profileRoutes(app: ConsoleApp, ctx: ConsoleContext): void {
  app.get("/profiles", async (c) => {
    const read = await ctx.asManager(c, "admin_profiles", async (tx, tenant) => {
      const request = { organizationId: tenant.organizationId, requesterId: tenant.userId };
      const profiles = await readProfilesForAdmin(tx, request);
      const overview = await readMemberOverview(tx, request);
      return profiles.ok && overview.ok
        ? {
            value: { entries: profiles.entries, members: overview.members },
            outcome: "read" as const,
          }
        : { value: null, outcome: "rejected" as const };
    });
    const csrf = c.get("manager").csrfToken;
    return read
      ? c.html(profilesPage(read.members, read.entries, csrf))
      : c.html(refusedPage(), 403);
  });
}
