import type { MemoryKind, MemoryOrigin } from "@north/agent-runtime";
import { and, count, desc, eq, isNotNull, isNull, max, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { Tx } from "./client.ts";
import { type ForgetTarget, targetCondition } from "./memories/erasure.ts";
import { HOLDS_BODY, MEMORY_STATE, type MemoryState } from "./memories/live.ts";
import { members, memories } from "./schema/index.ts";

/**
 * The memory stores behind the managers' console (SPEC §8): the subjects held, the memories
 * without a subject, and a review of any of them with the author's email. Each runs in the
 * manager's tenant transaction: memories and members are readable there by RLS, nothing more.
 */

/** Where a memory stands: `forgotten` and `purged` rows are tombstones (no body, no subject id). */
export type { MemoryState };

/** A subject the organisation holds memories about, as its newest memory spells it. */
export interface HeldSubject {
  subjectType: string;
  /** The most recent spelling among the memories that still hold one. */
  subjectId: string;
  /** Live: not expired, not erased, not purged. */
  live: number;
  /** Expired but not purged yet: their bodies are still held. */
  expired: number;
  /** Creation time of the newest memory that still holds its body. */
  newest: Date;
}

/** Live and expired rows still hold a body; anything else is a tombstone. */
const holdsBody = and(...HOLDS_BODY);
const isLive = sql`${memories.forgottenAt} is null and ${memories.purgedAt} is null and ${memories.expiresAt} > now()`;
const isExpiredHeld = sql`${memories.forgottenAt} is null and ${memories.purgedAt} is null and ${memories.expiresAt} <= now()`;

/**
 * Every subject the organisation still holds a memory body about, newest first: type, the id as
 * last written, counts and date. A subject whose memories were all erased is not listed (its id
 * went with the bodies); a lookup by name still finds its tombstones.
 */
export async function listHeldSubjects(
  tx: Tx,
  params: { organizationId: string },
): Promise<HeldSubject[]> {
  const newest = max(memories.createdAt);
  const rows = await tx
    .select({
      subjectType: memories.subjectType,
      subjectId: sql<string>`(array_agg(${memories.subjectId} order by ${memories.createdAt} desc))[1]`,
      live: sql<number>`count(*) filter (where ${isLive})::int`,
      expired: sql<number>`count(*) filter (where ${isExpiredHeld})::int`,
      newest,
    })
    .from(memories)
    .where(
      and(
        eq(memories.organizationId, params.organizationId),
        isNotNull(memories.subjectFingerprint),
        holdsBody,
      ),
    )
    .groupBy(memories.subjectType, memories.subjectFingerprint)
    .orderBy(desc(newest), memories.subjectType);
  return rows.map((r) => ({
    subjectType: r.subjectType ?? "",
    subjectId: r.subjectId,
    live: r.live,
    expired: r.expired,
    newest: new Date(r.newest ?? 0),
  }));
}

/** How many memories without a subject the organisation holds, and how many are tombstones. */
export interface UnsubjectedSummary {
  live: number;
  expired: number;
  tombstones: number;
}

export async function summarizeMemoriesWithoutSubject(
  tx: Tx,
  params: { organizationId: string },
): Promise<UnsubjectedSummary> {
  const [row] = await tx
    .select({
      live: sql<number>`count(*) filter (where ${isLive})::int`,
      expired: sql<number>`count(*) filter (where ${isExpiredHeld})::int`,
      tombstones: sql<number>`count(*) filter (where ${memories.body} is null)::int`,
    })
    .from(memories)
    .where(
      and(eq(memories.organizationId, params.organizationId), isNull(memories.subjectFingerprint)),
    );
  return { live: row?.live ?? 0, expired: row?.expired ?? 0, tombstones: row?.tombstones ?? 0 };
}

/** One memory as the console shows it: provenance with emails, and its state. */
export interface ReviewedMemory {
  id: string;
  kind: MemoryKind;
  origin: MemoryOrigin;
  /** Null for a tombstone. */
  body: string | null;
  subjectType: string | null;
  /** Null without a subject, and for a tombstone. */
  subjectId: string | null;
  state: MemoryState;
  authorId: string;
  /** Null only if the author's member row could not be read. */
  authorEmail: string | null;
  runId: string;
  createdAt: Date;
  expiresAt: Date;
  forgottenAt: Date | null;
  forgottenByEmail: string | null;
  purgedAt: Date | null;
}

/** A target of the forget store, or every memory the organisation holds (the export). */
export type ReviewScope = ForgetTarget | { everything: true };

export interface MemoryReview {
  /** Newest first, at most `limit`. */
  memories: ReviewedMemory[];
  /** Every row in scope, tombstones included. */
  total: number;
  /** Rows in scope that still hold a body: what forgetting the scope would erase. */
  erasable: number;
}

const author = alias(members, "author");
const eraser = alias(members, "eraser");

/**
 * Everything held in a scope, tombstones included, with the author's and eraser's emails, the
 * state as the database clock sees it, and the counts a confirmation names.
 */
export async function reviewMemories(
  tx: Tx,
  params: { organizationId: string; scope: ReviewScope; limit?: number },
): Promise<MemoryReview> {
  const inScope: SQL[] = [eq(memories.organizationId, params.organizationId)];
  if (!("everything" in params.scope)) {
    const match = targetCondition(params.scope);
    if (match) inScope.push(match);
  }
  const [counts] = await tx
    .select({
      total: count(),
      erasable: sql<number>`count(*) filter (where ${holdsBody})::int`,
    })
    .from(memories)
    .where(and(...inScope));
  const query = tx
    .select({
      id: memories.id,
      kind: memories.kind,
      origin: memories.origin,
      body: memories.body,
      subjectType: memories.subjectType,
      subjectId: memories.subjectId,
      state: MEMORY_STATE,
      authorId: memories.authorId,
      authorEmail: author.email,
      runId: memories.runId,
      createdAt: memories.createdAt,
      expiresAt: memories.expiresAt,
      forgottenAt: memories.forgottenAt,
      forgottenByEmail: eraser.email,
      purgedAt: memories.purgedAt,
    })
    .from(memories)
    .leftJoin(
      author,
      and(eq(author.organizationId, memories.organizationId), eq(author.userId, memories.authorId)),
    )
    .leftJoin(
      eraser,
      and(
        eq(eraser.organizationId, memories.organizationId),
        eq(eraser.userId, memories.forgottenBy),
      ),
    )
    .where(and(...inScope))
    .orderBy(desc(memories.createdAt), memories.id);
  const rows = params.limit === undefined ? await query : await query.limit(params.limit);
  return { memories: rows, total: counts?.total ?? 0, erasable: counts?.erasable ?? 0 };
}
