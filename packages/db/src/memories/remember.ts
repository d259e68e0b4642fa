import {
  type Checked,
  checkConversationId,
  checkExpiryDays,
  checkMemoryBody,
  checkSubject,
  type MemoryKind,
  type MemoryOrigin,
  type NorthCode,
  type Subject,
  subjectKey,
} from "@north/agent-runtime";

import { and, desc, eq, gt, inArray, isNull, sql } from "drizzle-orm";
import { ADVISORY_LOCKS } from "../advisory-locks.ts";
import type { Tx } from "../client.ts";
import { memories, organizations } from "../schema/index.ts";
import type { Tenant } from "../tenant.ts";
import { HOLDS_BODY, LIVE_MEMORY } from "./live.ts";

/** Keyed fingerprint of a subject's canonical text, hex. The server holds the key. */
export type SubjectFingerprinter = (canonical: string) => string;

export interface RememberParams {
  author: Tenant;
  kind: MemoryKind;
  body: string;
  origin: MemoryOrigin;
  subjectType?: string;
  subjectId?: string;
  expiresInDays?: number;
  /** A caller-supplied conversation id, else the run the server assigned (request or session). */
  conversationId?: string;
  runId: string;
  fingerprint: SubjectFingerprinter;
  /** Unit vector of the body, when an embedder is configured. */
  embedding?: number[];
  /** The model that made it, `model@dimensions`. */
  embeddingModel?: string;
  /** Live memories of the organisation this one replaces (SPEC §5). */
  supersedes?: readonly string[];
  /**
   * The matter it is written in (SPEC §5a), resolved by the caller among those its author may
   * see; the insert policy refuses any other. Absent: firm-wide.
   */
  matterId?: string;
}

export type RememberResult =
  | {
      outcome: "created";
      memoryId: string;
      expiresAt: Date;
      subject: Subject | null;
      /** The memories this one replaced. */
      superseded: string[];
    }
  /** The same memory is already held (SPEC §5): a retried call never duplicates. */
  | { outcome: "noop"; memoryId: string; expiresAt: Date; subject: Subject | null }
  | { outcome: "rejected"; code: NorthCode; message: string };

const reject = (checked: Checked<unknown>): RememberResult => {
  if (checked.ok) throw new Error("not a rejection");
  return { outcome: "rejected", code: checked.code, message: checked.message };
};

/** Validates at the door (SPEC §5) and stores one memory; author and run never come from input. */
export async function rememberMemory(tx: Tx, params: RememberParams): Promise<RememberResult> {
  const body = checkMemoryBody(params.body);
  if (!body.ok) return reject(body);
  const subject = checkSubject(params.kind, params.subjectType, params.subjectId);
  if (!subject.ok) return reject(subject);
  const days = checkExpiryDays(params.expiresInDays);
  if (!days.ok) return reject(days);
  const conversation = checkConversationId(params.conversationId);
  if (!conversation.ok) return reject(conversation);

  const subjectFingerprint = subject.value ? params.fingerprint(subjectKey(subject.value)) : null;
  const existing = await heldAlready(tx, {
    author: params.author,
    kind: params.kind,
    origin: params.origin,
    subjectFingerprint,
    body: body.value,
    matterId: params.matterId ?? null,
  });
  if (existing) {
    return {
      outcome: "noop",
      memoryId: existing.id,
      expiresAt: existing.expiresAt,
      subject: subject.value,
    };
  }

  const superseded = await lockSuperseded(
    tx,
    params.author.organizationId,
    params.supersedes,
    params.matterId ?? null,
  );
  if (!superseded.ok) return reject(superseded);

  const [row] = await tx
    .insert(memories)
    .values({
      organizationId: params.author.organizationId,
      authorId: params.author.userId,
      kind: params.kind,
      origin: params.origin,
      body: body.value,
      subjectType: subject.value?.type ?? null,
      subjectId: subject.value?.id ?? null,
      subjectFingerprint,
      matterId: params.matterId ?? null,
      runId: conversation.value ? `conversation:${conversation.value}` : params.runId,
      embedding: params.embedding ?? null,
      embeddingModel: params.embedding ? (params.embeddingModel ?? null) : null,
      // The organisation's language now, so `search` stems the body as recall will (decision 018).
      language: sql`(select o.language from ${organizations} o where o.id = ${params.author.organizationId})`,
      expiresAt: sql`now() + make_interval(days => ${days.value})`,
    })
    .returning({ id: memories.id, expiresAt: memories.expiresAt });
  if (!row) throw new Error("insert returned no memory");
  if (superseded.value.length > 0) {
    await tx
      .update(memories)
      .set({ supersededBy: row.id, supersededAt: sql`now()` })
      .where(
        and(
          eq(memories.organizationId, params.author.organizationId),
          inArray(memories.id, superseded.value),
        ),
      );
  }
  return {
    outcome: "created",
    memoryId: row.id,
    expiresAt: row.expiresAt,
    subject: subject.value,
    superseded: superseded.value,
  };
}

/** At most this many memories replaced by one remember. */
export const MAX_SUPERSEDES = 20;
const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The memories a remember supersedes, checked and locked (`FOR UPDATE`, so two writers cannot
 * both replace one): each must be a memory of this organisation, neither erased nor purged nor
 * already superseded. Any that is not refuses the whole remember — nothing is stored. Any member
 * may supersede any live memory of the workspace: unlike erasure it removes nothing, `held` still
 * lists the old memory with what replaced it (decision 019).
 */
async function lockSuperseded(
  tx: Tx,
  organizationId: string,
  requested: readonly string[] | undefined,
  matterId: string | null,
): Promise<Checked<string[]>> {
  const ids = [...new Set(requested ?? [])];
  if (ids.length === 0) return { ok: true, value: [] };
  const invalid = (message: string): Checked<string[]> => ({
    ok: false,
    code: "NORTH_SUPERSEDES_INVALID",
    message: `${message} Nothing was stored. Send memory ids from north__memory_recall or north__memory_held, or leave supersedes out.`,
  });
  if (ids.length > MAX_SUPERSEDES) {
    return invalid(`supersedes names ${ids.length} memories; at most ${MAX_SUPERSEDES}.`);
  }
  if (!ids.every((id) => UUID_SHAPE.test(id))) {
    return invalid("supersedes holds something that is not a memory id.");
  }
  const rows = await tx
    .select({ id: memories.id, supersededBy: memories.supersededBy, matterId: memories.matterId })
    .from(memories)
    .where(
      and(eq(memories.organizationId, organizationId), inArray(memories.id, ids), ...HOLDS_BODY),
    )
    .for("update");
  // A memory replaces only memories of its own scope (SPEC §5a): a matter's memory never hides
  // a firm-wide one from colleagues who may not see the matter, nor hands them its id in `held`.
  // Refused with the same words as a memory that does not exist: no scope is named.
  if (rows.length !== ids.length || rows.some((r) => r.matterId !== matterId)) {
    return invalid(
      "supersedes names a memory that does not exist in this workspace, or was erased.",
    );
  }
  if (rows.some((r) => r.supersededBy !== null)) {
    return invalid("supersedes names a memory that a newer one already replaced.");
  }
  return { ok: true, value: ids };
}

/** How long an identical memory makes a new remember a `noop` (SPEC §5). */
export const IDEMPOTENCE_WINDOW_HOURS = 24;

/**
 * An identical memory (same author, kind, origin, subject and body) still live and written in
 * the last 24 hours. Identical remembers are serialised by a transaction-level advisory lock on
 * a hash of that identity, taken before looking: of eight parallel identical calls, the first
 * inserts and the seven others, waiting on the lock, then find its committed row.
 */
async function heldAlready(
  tx: Tx,
  memory: {
    author: Tenant;
    kind: MemoryKind;
    origin: MemoryOrigin;
    subjectFingerprint: string | null;
    body: string;
    matterId: string | null;
  },
): Promise<{ id: string; expiresAt: Date } | null> {
  const identity = [
    memory.author.organizationId,
    memory.author.userId,
    memory.kind,
    memory.origin,
    memory.subjectFingerprint ?? "",
    memory.matterId ?? "",
  ].join(":");
  await tx.execute(
    sql`select pg_advisory_xact_lock(hashtextextended(${identity} || ':' || md5(${memory.body}), ${ADVISORY_LOCKS.rememberIdentitySeed}))`,
  );
  const [row] = await tx
    .select({ id: memories.id, expiresAt: memories.expiresAt })
    .from(memories)
    .where(
      and(
        eq(memories.organizationId, memory.author.organizationId),
        eq(memories.authorId, memory.author.userId),
        eq(memories.kind, memory.kind),
        eq(memories.origin, memory.origin),
        memory.matterId === null
          ? isNull(memories.matterId)
          : eq(memories.matterId, memory.matterId),
        memory.subjectFingerprint === null
          ? isNull(memories.subjectFingerprint)
          : eq(memories.subjectFingerprint, memory.subjectFingerprint),
        // memories_identity's key, so the look-up reads an identity's few rows, then the body.
        sql`md5(${memories.body}) = md5(${memory.body})`,
        eq(memories.body, memory.body),
        ...LIVE_MEMORY,
        gt(memories.createdAt, sql`now() - make_interval(hours => ${IDEMPOTENCE_WINDOW_HOURS})`),
      ),
    )
    .orderBy(desc(memories.createdAt))
    .limit(1);
  return row ?? null;
}
