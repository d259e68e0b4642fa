import { checkSubjectLookup, subjectKey } from "@north/agent-runtime";
import {
  type ForgetTarget,
  forgetMemories,
  listHeldSubjects,
  type MemoryReview,
  memoriesWithheld,
  type ReviewedMemory,
  reviewMemories,
  summarizeMemoriesWithoutSubject,
  type Tx,
} from "@north/db";
import type { Context } from "hono";
import type { ConsoleApp, ConsoleContext, Env, PageWork } from "../context.ts";
import {
  confirmPage,
  type MemoryTarget,
  memoriesCount,
  memoriesPage,
  type Notice,
  reviewPage,
} from "../pages/memories.ts";

/** The newest rows a review page shows; the JSON download has every row. */
const REVIEW_LIMIT = 500;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Form = Record<string, unknown>;
const field = (form: Form, name: string) => {
  const value = form[name];
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
};

/**
 * The target a form names: `target=memory` with `memory_id`, `target=none` (memories without a
 * subject), else a subject (`subject_id`, and `subject_type` to narrow it to one type).
 */
function parseTarget(form: Form): MemoryTarget | { error: string } {
  const kind = field(form, "target");
  if (kind === "none") return { kind: "none" };
  if (kind === "memory") {
    const memoryId = field(form, "memory_id") ?? "";
    return UUID.test(memoryId) ? { kind: "memory", memoryId } : { error: "No such memory." };
  }
  const subject = checkSubjectLookup(field(form, "subject_type"), field(form, "subject_id"));
  if (!subject.ok) {
    return {
      error: field(form, "subject_id")
        ? "The subject type is a short lowercase word (letters, digits, '-', '_'), and the subject at most 200 characters."
        : "Give the subject to look up (the type is optional).",
    };
  }
  return { kind: "subject", type: subject.value.type, id: subject.value.id };
}

/** The store's view of a target, and the ledger's: a subject key or a memory id, never a body. */
function storeTarget(
  ctx: ConsoleContext,
  target: MemoryTarget,
): { scope: ForgetTarget; audit?: string } {
  if (target.kind === "memory") {
    return { scope: { memoryId: target.memoryId }, audit: target.memoryId };
  }
  if (target.kind === "none") return { scope: { withoutSubject: true } };
  const key = subjectKey(target);
  return {
    scope: { subjectFingerprint: ctx.fingerprint(key).fingerprint, subjectType: target.type },
    audit: key,
  };
}

const frontPage = async (tx: Tx, organizationId: string) => ({
  subjects: await listHeldSubjects(tx, { organizationId }),
  unsubjected: await summarizeMemoriesWithoutSubject(tx, { organizationId }),
});

/** A search's result: the review, or the front page again with the types the name is held under. */
type Found =
  | { review: MemoryReview }
  | { front: Awaited<ReturnType<typeof frontPage>>; types: string[]; withheld: number };

/**
 * What the organisation holds of a subject: its review, or, when nothing of that type is held,
 * the front page with the other types the name is held under and how many memories about it
 * sit behind a wall this manager may not see (SPEC §5a: counted, never read).
 */
async function findHeld(
  tx: Tx,
  organizationId: string,
  scope: ForgetTarget,
  audit: string | undefined,
): Promise<PageWork<Found>> {
  const review = await reviewMemories(tx, { organizationId, scope, limit: REVIEW_LIMIT });
  if (review.total > 0) return { value: { review }, outcome: "read", target: audit };
  // Nothing of this type: say under which types the name is held, if any.
  const anyType =
    "subjectFingerprint" in scope && scope.subjectType
      ? await reviewMemories(tx, {
          organizationId,
          scope: { subjectFingerprint: scope.subjectFingerprint },
          limit: REVIEW_LIMIT,
        })
      : undefined;
  const types = [...new Set(anyType?.memories.map((m) => m.subjectType ?? "") ?? [])];
  const front = await frontPage(tx, organizationId);
  const withheld =
    "subjectFingerprint" in scope
      ? await memoriesWithheld(tx, {
          subjectFingerprint: scope.subjectFingerprint,
          subjectType: scope.subjectType,
        })
      : 0;
  return { value: { front, types, withheld }, outcome: "read", target: audit };
}

/** What the front page says when a search found nothing this manager may see. */
function nothingHeldNotice(
  target: { type?: string; id: string },
  found: { types: string[]; withheld: number },
): Notice {
  const named = `${target.type ? `${target.type} ` : ""}“${target.id}”`;
  if (found.withheld > 0) {
    return {
      tone: "info",
      text: `Nothing you may see is held about ${named}. ${found.withheld} memories about it sit in matters you are screened from or not on: only their team can see them.`,
    };
  }
  const elsewhere =
    found.types.length > 0
      ? ` It is held under another type (${found.types.join(", ")}): search again with that type, or leave the type empty.`
      : " Matching already ignores case, accents and spacing: check the spelling against the subjects held below.";
  return { tone: "info", text: `Nothing is held about ${named}.${elsewhere}` };
}

/** The message after an erasure: the redirect carries counts only (SPEC §8). */
function erasedNotice(erased?: string, remaining?: string): Notice | undefined {
  if (!/^\d{1,6}$/.test(erased ?? "")) return undefined;
  const n = Number(erased);
  const left = /^[1-9]\d{0,5}$/.test(remaining ?? "")
    ? ` ${memoriesCount(Number(remaining))} written since are still held: review the subject again.`
    : "";
  return n === 0
    ? { tone: "info", text: `Nothing was erased: it had already been erased or purged.${left}` }
    : {
        tone: "success",
        text: `${memoriesCount(n)} erased: the ${n === 1 ? "body is" : "bodies are"} gone; tombstones remain.${left}`,
      };
}

type PageContext = Context<Env>;

/** Memories (SPEC §8): the subjects held, subject access, erasure, and the JSON download. */
export function memoryRoutes(app: ConsoleApp, ctx: ConsoleContext): void {
  const csrfOf = (c: PageContext) => c.get("manager").csrfToken;

  // A GET never searches, whatever its query says: subject names stay out of URLs.
  app.get("/memories", async (c) => {
    const view = await ctx.asManager(c, "admin_memory_subjects", async (tx, tenant) => ({
      value: await frontPage(tx, tenant.organizationId),
      outcome: "read" as const,
    }));
    const notice = erasedNotice(c.req.query("erased"), c.req.query("remaining"));
    return c.html(memoriesPage({ ...view, notice }, csrfOf(c)));
  });

  /** A subject's review: from the search form, or a subject's "Review" button. */
  app.post("/memories", async (c) => {
    const target = parseTarget(await c.req.parseBody());
    if ("error" in target || target.kind !== "subject") {
      return badTarget(c, ctx, "error" in target ? target.error : "Give the subject to look up.");
    }
    const { scope, audit } = storeTarget(ctx, target);
    const found = await ctx.asManager<Found>(c, "admin_memory_held", (tx, tenant) =>
      findHeld(tx, tenant.organizationId, scope, audit),
    );
    if ("review" in found) {
      // Named as its newest memory spells it, whatever the spelling searched.
      const id = found.review.memories.find((m) => m.subjectId)?.subjectId ?? target.id;
      return c.html(reviewPage({ target: { ...target, id }, review: found.review }, csrfOf(c)));
    }
    const notice = nothingHeldNotice(target, found);
    return c.html(memoriesPage({ ...found.front, notice, typed: target }, csrfOf(c)));
  });

  app.post("/memories/without-subject", async (c) => {
    const review = await ctx.asManager(c, "admin_memory_held", async (tx, tenant) => ({
      value: await reviewMemories(tx, {
        organizationId: tenant.organizationId,
        scope: { withoutSubject: true },
        limit: REVIEW_LIMIT,
      }),
      outcome: "read" as const,
    }));
    return c.html(reviewPage({ target: { kind: "none" }, review }, csrfOf(c)));
  });

  /** Names what "Yes, erase" would erase, counted now; nothing changes here. */
  app.post("/memories/confirm", async (c) => {
    const target = parseTarget(await c.req.parseBody());
    if ("error" in target) return badTarget(c, ctx, target.error);
    const { scope, audit } = storeTarget(ctx, target);
    const review = await ctx.asManager(c, "admin_memory_held", async (tx, tenant) => ({
      value: await reviewMemories(tx, {
        organizationId: tenant.organizationId,
        scope,
        limit: target.kind === "memory" ? 1 : 0,
      }),
      outcome: "read" as const,
      target: audit,
    }));
    const memory: ReviewedMemory | undefined = review.memories[0];
    if (target.kind === "memory" && !memory) return badTarget(c, ctx, "No such memory.", 404);
    return c.html(confirmPage({ target, count: review.erasable, memory }, csrfOf(c)));
  });

  // Post/redirect/get: the redirect carries only counts, never the subject.
  app.post("/memories/forget", async (c) => {
    const target = parseTarget(await c.req.parseBody());
    if ("error" in target) return badTarget(c, ctx, target.error);
    const { scope, audit } = storeTarget(ctx, target);
    const result = await ctx.asManager(c, "admin_memory_forget", async (tx, tenant) => {
      const forgot = await forgetMemories(tx, {
        requester: tenant,
        isManager: true,
        target: scope,
      });
      const affected = forgot.outcome === "rejected" ? 0 : forgot.forgotten;
      return { value: forgot, outcome: forgot.outcome, target: audit, affected };
    });
    if (result.outcome === "rejected") return badTarget(c, ctx, "No such memory.", 404);
    const remaining = result.remaining > 0 ? `&remaining=${result.remaining}` : "";
    return c.redirect(`/admin/memories?erased=${result.forgotten}${remaining}`, 303);
  });

  /** Everything the organisation holds: live bodies, expired ones, tombstones without. */
  app.get("/memories/export.json", (c) => exportJson(c, ctx, { kind: "everything" }));
  /** One subject, or the memories without one: an access request answered in one click. */
  app.post("/memories/export.json", async (c) => {
    const target = parseTarget(await c.req.parseBody());
    if ("error" in target || target.kind === "memory") {
      return badTarget(c, ctx, "error" in target ? target.error : "Export a subject.");
    }
    return exportJson(c, ctx, target);
  });
}

async function badTarget(
  c: PageContext,
  ctx: ConsoleContext,
  text: string,
  status: 400 | 404 = 400,
) {
  const view = await ctx.asManager(c, "admin_memory_subjects", async (tx, tenant) => ({
    value: await frontPage(tx, tenant.organizationId),
    outcome: "rejected" as const,
  }));
  return c.html(
    memoriesPage({ ...view, notice: { tone: "error", text } }, c.get("manager").csrfToken),
    status,
  );
}

async function exportJson(
  c: PageContext,
  ctx: ConsoleContext,
  target: Exclude<MemoryTarget, { kind: "memory" }> | { kind: "everything" },
) {
  const { scope, audit } =
    target.kind === "everything"
      ? { scope: { everything: true as const }, audit: undefined }
      : storeTarget(ctx, target);
  const review = await ctx.asManager(c, "admin_memory_export", async (tx, tenant) => {
    const value = await reviewMemories(tx, { organizationId: tenant.organizationId, scope });
    return { value, outcome: "read" as const, target: audit, affected: value.total };
  });
  const exportedAt = new Date();
  const document = {
    exported_at: exportedAt.toISOString(),
    scope: { everything: "organization", subject: "subject", none: "without_subject" }[target.kind],
    subject:
      target.kind === "subject"
        ? { subject_type: target.type ?? null, subject_id: target.id }
        : undefined,
    note: "Bodies are what the assistant saved; tombstones (forgotten or purged) keep no body and no subject id.",
    count: review.total,
    memories: review.memories.map((m) => ({
      memory_id: m.id,
      kind: m.kind,
      origin: m.origin,
      state: m.state,
      body: m.body,
      subject_type: m.subjectType,
      subject_id: m.subjectId,
      author_email: m.authorEmail,
      run_id: m.runId,
      created_at: m.createdAt.toISOString(),
      expires_at: m.expiresAt.toISOString(),
      forgotten_at: m.forgottenAt?.toISOString() ?? null,
      forgotten_by_email: m.forgottenByEmail,
      purged_at: m.purgedAt?.toISOString() ?? null,
    })),
  };
  const name = target.kind === "everything" ? "north-memories" : "north-memories-subject";
  c.header("Content-Type", "application/json; charset=utf-8");
  c.header(
    "Content-Disposition",
    `attachment; filename="${name}-${exportedAt.toISOString().slice(0, 10)}.json"`,
  );
  return c.body(JSON.stringify(document, null, 2));
}
