import { checkSubjectLookup, subjectKey } from "@north/agent-runtime";
import { forgetMemories, memoriesHeld } from "@north/db";
import type { ConsoleApp, ConsoleContext } from "../context.ts";
import { memoriesPage } from "../pages/memories.ts";

/** Memories (SPEC §8): subject access and erasure. */
export function memoryRoutes(app: ConsoleApp, ctx: ConsoleContext): void {
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
    const held = await ctx.asManager(c, "admin_memory_held", async (tx, tenant) => ({
      value: await memoriesHeld(tx, {
        organizationId: tenant.organizationId,
        subjectFingerprint: ctx.fingerprint(subjectKey(value)).fingerprint,
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
    const forgotten = await ctx.asManager(c, "admin_memory_forget", async (tx, tenant) => {
      const result = await forgetMemories(tx, {
        requester: tenant,
        isManager: true,
        target: { subjectFingerprint: ctx.fingerprint(key).fingerprint },
      });
      const count = result.outcome === "rejected" ? 0 : result.forgotten;
      return { value: count, outcome: result.outcome, target: key, affected: count };
    });
    return c.redirect(`/admin/memories?erased=${forgotten}`, 303);
  });
}
