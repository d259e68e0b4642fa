import type { MemoryKind, MemoryOrigin } from "@north/agent-runtime";
import { and, desc, eq, isNull, ne, not, type SQL, sql } from "drizzle-orm";
import type { Tx } from "../client.ts";
import { memories } from "../schema/index.ts";
import type { Tenant } from "../tenant.ts";
import { HOLDS_BODY, IN_HELD_MATTER, MEMORY_STATE, type MemoryState } from "./live.ts";
import { recallColumns } from "./recall.ts";

export interface HeldMemory {
  id: string;
  kind: MemoryKind;
  origin: MemoryOrigin;
  /** Null for a tombstone (forgotten or purged). */
  body: string | null;
  subjectType: string | null;
  subjectId: string | null;
  authorId: string;
  runId: string;
  createdAt: Date;
  expiresAt: Date;
  forgottenAt: Date | null;
  forgottenBy: string | null;
  purgedAt: Date | null;
  /** The memory that replaced this one, if any. */
  supersededBy: string | null;
  /** The matter it was written in, or null for a firm-wide memory. */
  matterId: string | null;
  /** Where it stands by the database's clock ({@link MEMORY_STATE}). */
  state: MemoryState;
}

/** Everything held about a subject, tombstones and expired-but-unpurged memories included. */
export async function memoriesHeld(
  tx: Tx,
  params: { organizationId: string; subjectFingerprint: string; subjectType?: string },
): Promise<HeldMemory[]> {
  return tx
    .select({
      ...recallColumns,
      runId: memories.runId,
      forgottenAt: memories.forgottenAt,
      forgottenBy: memories.forgottenBy,
      purgedAt: memories.purgedAt,
      supersededBy: memories.supersededBy,
      state: MEMORY_STATE,
    })
    .from(memories)
    .where(
      and(
        eq(memories.organizationId, params.organizationId),
        eq(memories.subjectFingerprint, params.subjectFingerprint),
        params.subjectType ? eq(memories.subjectType, params.subjectType) : undefined,
      ),
    )
    .orderBy(desc(memories.createdAt));
}

/**
 * One memory, a subject (of one type, or of every type when `subjectType` is absent), or every
 * memory without a subject (the console's review of subject-less memories).
 */
export type ForgetTarget =
  | { subjectFingerprint: string; subjectType?: string }
  | { memoryId: string }
  | { withoutSubject: true };

/** The rows a target names, in every state: callers add the states they mean. */
export function targetCondition(target: ForgetTarget): SQL | undefined {
  if ("memoryId" in target) return eq(memories.id, target.memoryId);
  if ("withoutSubject" in target) return isNull(memories.subjectFingerprint);
  return and(
    eq(memories.subjectFingerprint, target.subjectFingerprint),
    target.subjectType ? eq(memories.subjectType, target.subjectType) : undefined,
  );
}

export type ForgetResult =
  | {
      outcome: "forgotten" | "noop";
      forgotten: number;
      /** Memories about the subject still held (not forgotten) that this caller may not erase. */
      remaining: number;
      /** Of those, the ones kept because their matter is under legal hold (SPEC §5a). */
      heldBack: number;
    }
  | { outcome: "rejected"; code: "NORTH_FORBIDDEN" | "NORTH_NOT_FOUND"; message: string };

/**
 * Forgets in one statement: the body, subject id and embedding are removed and the row stays as
 * a tombstone recording who and when. `isManager` (a manager acting with the `admin` scope)
 * forgets everything matching; anyone else only what they wrote (by subject), or is refused (by
 * id). By subject, the result says how many memories about it remain, so a receipt never
 * suggests nothing is left when something is. A purged memory has nothing left to erase: it is
 * neither counted nor marked as erased by the caller.
 */
export async function forgetMemories(
  tx: Tx,
  params: { requester: Tenant; isManager: boolean; target: ForgetTarget },
): Promise<ForgetResult> {
  const { requester, isManager, target } = params;
  const mayForget = isManager ? sql`true` : eq(memories.authorId, requester.userId);
  const match = targetCondition(target);
  const inOrganization = eq(memories.organizationId, requester.organizationId);
  const erased = await tx
    .update(memories)
    .set({
      body: null,
      subjectId: null,
      embedding: null,
      forgottenAt: sql`now()`,
      forgottenBy: requester.userId,
    })
    .where(and(inOrganization, match, ...HOLDS_BODY, mayForget, not(IN_HELD_MATTER)))
    .returning({ id: memories.id });
  // Kept under legal hold, though the caller could otherwise have erased them.
  const [held] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(memories)
    .where(and(inOrganization, match, ...HOLDS_BODY, mayForget, IN_HELD_MATTER));
  const heldBack = held?.n ?? 0;
  if (!("memoryId" in target)) {
    const [left] = await tx
      .select({ n: sql<number>`count(*)::int` })
      .from(memories)
      .where(and(inOrganization, match, ...HOLDS_BODY));
    const remaining = left?.n ?? 0;
    return erased.length > 0
      ? { outcome: "forgotten", forgotten: erased.length, remaining, heldBack }
      : { outcome: "noop", forgotten: 0, remaining, heldBack };
  }
  if (erased.length > 0) {
    return { outcome: "forgotten", forgotten: erased.length, remaining: 0, heldBack: 0 };
  }
  if (heldBack > 0) return { outcome: "noop", forgotten: 0, remaining: 1, heldBack };

  const [existing] = await tx
    .select({
      authorId: memories.authorId,
      forgottenAt: memories.forgottenAt,
      purgedAt: memories.purgedAt,
    })
    .from(memories)
    .where(
      and(eq(memories.organizationId, requester.organizationId), eq(memories.id, target.memoryId)),
    );
  if (!existing) {
    return {
      outcome: "rejected",
      code: "NORTH_NOT_FOUND",
      message: "No memory has this id in this workspace.",
    };
  }
  if (existing.forgottenAt || existing.purgedAt) {
    return { outcome: "noop", forgotten: 0, remaining: 0, heldBack: 0 };
  }
  return {
    outcome: "rejected",
    code: "NORTH_FORBIDDEN",
    message: "Only the memory's author or a workspace manager may forget it. Nothing was changed.",
  };
}

/**
 * How many live memories matching `target` were written by someone other than `requester`: what
 * a forget without the manager's reach would leave. Read before erasing, so a manager's host can
 * be asked to step up to `admin` first and the retried call erases everything once (decision 030).
 */
export async function othersMemoriesMatching(
  tx: Tx,
  params: { requester: Tenant; target: ForgetTarget },
): Promise<number> {
  const { requester, target } = params;
  const [row] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(memories)
    .where(
      and(
        eq(memories.organizationId, requester.organizationId),
        targetCondition(target),
        ...HOLDS_BODY,
        ne(memories.authorId, requester.userId),
      ),
    );
  return row?.n ?? 0;
}
