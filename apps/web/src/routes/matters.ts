import {
  isMatterReference,
  listMatters,
  matterDetail,
  matterMemories,
  visibleMatter,
} from "@north/db";
import type { ConsoleApp, ConsoleContext } from "../context.ts";
import { notFoundPage } from "../pages/error.ts";
import { type MatterView, matterPage, mattersPage } from "../pages/matters.ts";

/**
 * Matters (SPEC §5a): the list and a page per matter, read as the signed-in manager on the app
 * role, so the may-see rule is PostgreSQL's here too: a manager screened from a matter sees its
 * team, screens and hold, and none of its memories.
 */
export function matterRoutes(app: ConsoleApp, ctx: ConsoleContext): void {
  app.get("/matters", async (c) => {
    const rows = await ctx.asManager(c, "admin_matters", async (tx, tenant) => {
      const value = await listMatters(tx, { organizationId: tenant.organizationId });
      return { value, outcome: "read" as const, affected: value.length };
    });
    return c.html(mattersPage(rows, c.get("manager").csrfToken));
  });

  app.get("/matters/:reference{.+}", async (c) => {
    const reference = c.req.param("reference");
    const view = await ctx.asManager<MatterView | undefined>(
      c,
      "admin_matter",
      async (tx, tenant) => {
        const detail = isMatterReference(reference)
          ? await matterDetail(tx, { organizationId: tenant.organizationId, reference })
          : undefined;
        if (!detail) return { value: undefined, outcome: "rejected", reason: "unknown_matter" };
        const seen = await visibleMatter(tx, { reference });
        const screened = detail.screens.some((s) => s.userId === tenant.userId);
        const memories = seen ? await matterMemories(tx, { matterId: detail.id }) : [];
        return {
          value: { detail, memories, screened },
          outcome: "read",
          target: `matter:${detail.reference.toLowerCase()}`,
          affected: memories.length,
        };
      },
    );
    if (!view) return c.html(notFoundPage(), 404);
    return c.html(matterPage(view, c.get("manager").csrfToken));
  });
}
