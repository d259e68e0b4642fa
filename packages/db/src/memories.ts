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
import { and, desc, eq, gt, inArray, isNotNull, isNull, ne, type SQL, sql } from "drizzle-orm";
import type { Sql } from "postgres";
import type { Database, Tx } from "./client.ts";
import { prepareStatement, runStatement, timestampOf } from "./prepared.ts";
import { memories, organizations } from "./schema/index.ts";
import type { Tenant } from "./tenant.ts";

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
  });
  if (existing) {
    return {
      outcome: "noop",
      memoryId: existing.id,
      expiresAt: existing.expiresAt,
      subject: subject.value,
    };
  }

  const superseded = await lockSuperseded(tx, params.author.organizationId, params.supersedes);
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
    .select({ id: memories.id, supersededBy: memories.supersededBy })
    .from(memories)
    .where(
      and(
        eq(memories.organizationId, organizationId),
        inArray(memories.id, ids),
        isNull(memories.forgottenAt),
        isNull(memories.purgedAt),
      ),
    )
    .for("update");
  if (rows.length !== ids.length) {
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
  },
): Promise<{ id: string; expiresAt: Date } | null> {
  const identity = [
    memory.author.organizationId,
    memory.author.userId,
    memory.kind,
    memory.origin,
    memory.subjectFingerprint ?? "",
  ].join(":");
  await tx.execute(
    sql`select pg_advisory_xact_lock(hashtextextended(${identity} || ':' || md5(${memory.body}), 7410005))`,
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
        memory.subjectFingerprint === null
          ? isNull(memories.subjectFingerprint)
          : eq(memories.subjectFingerprint, memory.subjectFingerprint),
        eq(memories.body, memory.body),
        isNull(memories.supersededBy),
        isNull(memories.forgottenAt),
        isNull(memories.purgedAt),
        gt(memories.expiresAt, sql`now()`),
        gt(memories.createdAt, sql`now() - make_interval(hours => ${IDEMPOTENCE_WINDOW_HOURS})`),
      ),
    )
    .orderBy(desc(memories.createdAt))
    .limit(1);
  return row ?? null;
}

export type RecallMode = "semantic" | "fulltext" | "recency";

export interface RecalledMemory {
  id: string;
  kind: MemoryKind;
  origin: MemoryOrigin;
  body: string;
  subjectType: string | null;
  subjectId: string | null;
  authorId: string;
  createdAt: Date;
  expiresAt: Date;
}

/**
 * How many of the newest full-text matches are ranked. A match older than the newest 200 is
 * still found by a narrower query or a subject, not by a broad one (decisions 016 and 021).
 */
export const FULLTEXT_CANDIDATES = 200;

/**
 * How many of the newest embedded memories semantic recall compares with the query, besides the
 * full-text candidates (decision 021): without an approximate-nearest-neighbour index, a memory
 * older than these that shares no word with the query is not found by meaning alone.
 */
export const VECTOR_CANDIDATES = 200;

/** How deep each ranked list (full text, vectors) goes into the fusion. */
const FUSION_DEPTH = 50;

/** Reciprocal rank fusion's constant (Cormack et al.): a list's n-th scores 1 / (RRF_K + n). */
const RRF_K = 60;

export interface RecallParams {
  organizationId: string;
  query?: string;
  subjectFingerprint?: string;
  /** With a subject: only this type; absent, every type. */
  subjectType?: string;
  limit: number;
  /** The query's unit vector, when an embedder is configured: recall is then semantic. */
  queryEmbedding?: number[];
  /** The model that made it: only memories embedded by the same model are compared. */
  embeddingModel?: string;
  /**
   * Wraps recall's statement when it is one statement built once (full-text recall), so the
   * caller can send it as its transaction's last (`ToolContext.last`, decision 036).
   */
  last?: <T>(statement: () => Promise<T>) => Promise<T>;
}

const recallColumns = {
  id: memories.id,
  kind: memories.kind,
  origin: memories.origin,
  body: memories.body,
  subjectType: memories.subjectType,
  subjectId: memories.subjectId,
  authorId: memories.authorId,
  createdAt: memories.createdAt,
  expiresAt: memories.expiresAt,
};

type RecallRow = Omit<RecalledMemory, "body"> & { body: string | null };

/**
 * Full-text recall's ranked list (decision 018), through `memory_fulltext_candidates` (decision
 * 021: the GIN index is out of the app role's reach under RLS, so the search runs as the owner,
 * confined to this transaction's tenant): the memories that have every word of the query,
 * best first, then — when they are fewer than `depth` — those that have some of the words. As a
 * subquery of (cid, n): the memory's id and its place in the list.
 */
const rankedByWords = (params: RecallParams, query: string, depth: number) => sql`
  (select c.cid, c.n from public.memory_fulltext_candidates(
    ${query}, ${params.subjectFingerprint ?? null}::text,
    ${params.subjectFingerprint ? (params.subjectType ?? null) : null}::text,
    ${depth}::integer, ${FULLTEXT_CANDIDATES}::integer
  ) with ordinality as c(cid, rank, n))`;

/**
 * The live rows of full-text recall's list, in its order, in one statement built once (decision
 * 036): the same conditions as `live` in `recallMemories`, the subject's only when one is given.
 */
const RECALL_BY_WORDS = prepareStatement<
  {
    organizationId: string;
    query: string;
    subjectFingerprint: string | null;
    subjectType: string | null;
    limit: number;
  },
  RecallRow
>(
  ["organizationId", "query", "subjectFingerprint", "subjectType", "limit"],
  (db, p) =>
    db
      .select(recallColumns)
      .from(memories)
      .innerJoin(
        sql`(select c.cid, c.n from public.memory_fulltext_candidates(
          ${p.query}, ${p.subjectFingerprint}::text, ${p.subjectType}::text,
          ${p.limit}::integer, ${FULLTEXT_CANDIDATES}::integer
        ) with ordinality as c(cid, rank, n)) as ranked`,
        sql`ranked.cid = ${memories.id}`,
      )
      .where(
        and(
          eq(memories.organizationId, p.organizationId),
          isNull(memories.forgottenAt),
          isNull(memories.purgedAt),
          isNull(memories.supersededBy),
          gt(memories.expiresAt, sql`now()`),
          sql`(${p.subjectFingerprint}::text is null or ${memories.subjectFingerprint} = ${p.subjectFingerprint})`,
          sql`(${p.subjectType}::text is null or ${memories.subjectType} = ${p.subjectType})`,
        ),
      )
      .orderBy(sql`ranked.n`),
  (row) => ({
    id: String(row.id),
    kind: row.kind as MemoryKind,
    origin: row.origin as MemoryOrigin,
    body: row.body === null ? null : String(row.body),
    subjectType: row.subject_type === null ? null : String(row.subject_type),
    subjectId: row.subject_id === null ? null : String(row.subject_id),
    authorId: String(row.author_id),
    createdAt: timestampOf(row.created_at),
    expiresAt: timestampOf(row.expires_at),
  }),
);

async function recallByWords(tx: Tx, params: RecallParams, query: string) {
  const last = params.last ?? ((statement) => statement());
  return last(() =>
    runStatement(tx, RECALL_BY_WORDS, {
      organizationId: params.organizationId,
      query,
      subjectFingerprint: params.subjectFingerprint ?? null,
      subjectType: params.subjectFingerprint ? (params.subjectType ?? null) : null,
      limit: params.limit,
    }),
  );
}

/**
 * Semantic recall's own list, best cosine similarity first, at most FUSION_DEPTH. On a server
 * with pgvector and the model's HNSW index, `memory_vector_candidates` takes it from the index
 * (decision 028). Otherwise (decision 021) it compares the newest VECTOR_CANDIDATES live memories
 * embedded by the query's model, plus the full-text candidates; vectors are unit length, so the
 * dot product is the cosine.
 */
async function rankedByMeaning(
  tx: Tx,
  live: SQL[],
  params: RecallParams & { queryEmbedding: number[] },
  alsoIds: string[],
) {
  const vector = sql`${`{${params.queryEmbedding.join(",")}}`}::real[]`;
  if (params.embeddingModel) {
    const [indexed] = await tx.execute<{ ids: string[] | null }>(sql`
      select pg_catalog.to_json(public.memory_vector_candidates(
        ${vector}, ${params.embeddingModel}::text, ${params.subjectFingerprint ?? null}::text,
        ${params.subjectFingerprint ? (params.subjectType ?? null) : null}::text,
        ${`{${alsoIds.join(",")}}`}::uuid[], ${FUSION_DEPTH}::integer, ${VECTOR_CANDIDATES}::integer
      )) as ids`);
    if (indexed?.ids) return indexed.ids;
  }
  const sameModel = [
    ...live,
    isNotNull(memories.embedding),
    params.embeddingModel ? eq(memories.embeddingModel, params.embeddingModel) : undefined,
  ];
  const newest = tx
    .select({ id: memories.id })
    .from(memories)
    .where(and(...sameModel))
    .orderBy(desc(memories.createdAt))
    .limit(VECTOR_CANDIDATES);
  const score = sql<number>`(select coalesce(sum(a * b), 0) from unnest(${memories.embedding}, ${vector}) as v(a, b))`;
  const rows = await tx
    .select({ id: memories.id })
    .from(memories)
    .where(
      and(
        ...sameModel,
        alsoIds.length > 0
          ? sql`(${memories.id} in ${newest} or ${inArray(memories.id, alsoIds)})`
          : inArray(memories.id, newest),
      ),
    )
    .orderBy(desc(score), desc(memories.createdAt))
    .limit(FUSION_DEPTH);
  return rows.map((r) => r.id);
}

/**
 * Reciprocal rank fusion of ranked id lists: each list gives its n-th id 1 / (RRF_K + n); the
 * highest sum first, the newer memory first on a tie (SPEC §5: recency breaks ties).
 */
function fuseRankings(lists: string[][], createdAt: ReadonlyMap<string, Date>): string[] {
  const scores = new Map<string, number>();
  for (const list of lists) {
    list.forEach((id, index) => {
      scores.set(id, (scores.get(id) ?? 0) + 1 / (RRF_K + index + 1));
    });
  }
  const time = (id: string) => createdAt.get(id)?.getTime() ?? 0;
  return [...scores.keys()].sort(
    (a, b) => (scores.get(b) ?? 0) - (scores.get(a) ?? 0) || time(b) - time(a),
  );
}

/** The live rows of `ids`, read under RLS, in the order `order` gives (at most `limit`). */
async function rowsInOrder(
  tx: Tx,
  live: SQL[],
  ids: string[],
  order: (rows: RecallRow[]) => string[],
  limit: number,
): Promise<RecallRow[]> {
  if (ids.length === 0) return [];
  const rows = await tx
    .select(recallColumns)
    .from(memories)
    .where(and(...live, inArray(memories.id, ids)));
  const byId = new Map(rows.map((r) => [r.id, r]));
  return order(rows)
    .slice(0, limit)
    .flatMap((id) => byId.get(id) ?? []);
}

/**
 * Live memories only (not expired, not forgotten, not purged, not superseded), newest first
 * unless a query ranks them: by full-text rank, or — when the query has an embedding — by the
 * fusion of full-text rank and cosine similarity (hybrid, reported as `semantic`). Every ranked
 * set is bounded (decision 021), so recall costs the same at 10,000 memories as at a million.
 */
export async function recallMemories(
  tx: Tx,
  params: RecallParams,
): Promise<{ mode: RecallMode; memories: RecalledMemory[] }> {
  // Built only where a statement is built per call (semantic and recency recall).
  const liveConditions = (): SQL[] => {
    const live = [
      eq(memories.organizationId, params.organizationId),
      isNull(memories.forgottenAt),
      isNull(memories.purgedAt),
      isNull(memories.supersededBy),
      gt(memories.expiresAt, sql`now()`),
    ];
    if (params.subjectFingerprint) {
      live.push(eq(memories.subjectFingerprint, params.subjectFingerprint));
      if (params.subjectType) live.push(eq(memories.subjectType, params.subjectType));
    }
    return live;
  };
  const query = params.query?.trim();

  let mode: RecallMode;
  let rows: RecallRow[];
  if (query && params.queryEmbedding) {
    mode = "semantic";
    const live = liveConditions();
    const byWords = (
      await tx.execute<{ cid: string }>(
        sql`select cid from ${rankedByWords(params, query, FUSION_DEPTH)} w`,
      )
    ).map((r) => r.cid);
    const byMeaning = await rankedByMeaning(
      tx,
      live,
      { ...params, queryEmbedding: params.queryEmbedding },
      byWords,
    );
    rows = await rowsInOrder(
      tx,
      live,
      [...new Set([...byMeaning, ...byWords])],
      (found) => fuseRankings([byMeaning, byWords], new Map(found.map((r) => [r.id, r.createdAt]))),
      params.limit,
    );
  } else if (query) {
    mode = "fulltext";
    rows = await recallByWords(tx, params, query);
  } else {
    mode = "recency";
    rows = await tx
      .select(recallColumns)
      .from(memories)
      .where(and(...liveConditions()))
      .orderBy(desc(memories.createdAt))
      .limit(params.limit);
  }
  return {
    mode,
    memories: rows.filter((r): r is RecalledMemory => r.body !== null),
  };
}

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
  const erased = await tx
    .update(memories)
    .set({
      body: null,
      subjectId: null,
      embedding: null,
      forgottenAt: sql`now()`,
      forgottenBy: requester.userId,
    })
    .where(
      and(
        eq(memories.organizationId, requester.organizationId),
        match,
        isNull(memories.forgottenAt),
        isNull(memories.purgedAt),
        mayForget,
      ),
    )
    .returning({ id: memories.id });
  if (!("memoryId" in target)) {
    const [left] = await tx
      .select({ n: sql<number>`count(*)::int` })
      .from(memories)
      .where(
        and(
          eq(memories.organizationId, requester.organizationId),
          match,
          isNull(memories.forgottenAt),
          isNull(memories.purgedAt),
        ),
      );
    const remaining = left?.n ?? 0;
    return erased.length > 0
      ? { outcome: "forgotten", forgotten: erased.length, remaining }
      : { outcome: "noop", forgotten: 0, remaining };
  }
  if (erased.length > 0) return { outcome: "forgotten", forgotten: erased.length, remaining: 0 };

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
    return { outcome: "noop", forgotten: 0, remaining: 0 };
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
        isNull(memories.forgottenAt),
        isNull(memories.purgedAt),
        ne(memories.authorId, requester.userId),
      ),
    );
  return row?.n ?? 0;
}

/** Removes the bodies of every expired memory (all organizations) and audits each purge. */
export async function purgeExpiredMemories(
  db: Database,
): Promise<{ organizations: number; purged: number }> {
  const rows = await db.execute<{ organization_id: string; purged: number }>(
    sql`select * from public.purge_expired_memories()`,
  );
  return {
    organizations: rows.length,
    purged: [...rows].reduce((sum, r) => sum + Number(r.purged), 0),
  };
}

/**
 * Recomputes every subject fingerprint from the subject id still stored beside it, with the
 * current canonical form and key: the operator step after canonical matching changed (or after
 * `NORTH_AUDIT_KEY` was rotated). Owner connection, every organisation, one transaction.
 * Tombstones keep their old fingerprint: their subject id was erased, so nothing can recompute
 * it — they stay listed by id in the audit trail but no longer match a subject lookup.
 */
export async function rekeySubjectFingerprints(
  db: Database,
  fingerprint: SubjectFingerprinter,
): Promise<{ checked: number; rekeyed: number; tombstonesKept: number }> {
  return db.transaction(async (tx) => {
    const rows = await tx
      .select({
        id: memories.id,
        subjectId: memories.subjectId,
        subjectFingerprint: memories.subjectFingerprint,
      })
      .from(memories)
      .where(isNotNull(memories.subjectId));
    const changed = rows.flatMap((row) => {
      const next = fingerprint(subjectKey({ id: row.subjectId ?? "" }));
      return next === row.subjectFingerprint ? [] : [{ id: row.id, next }];
    });
    if (changed.length > 0) {
      await tx.execute(sql`
        update ${memories} m set subject_fingerprint = v.fp
        from unnest(${`{${changed.map((c) => c.id).join(",")}}`}::uuid[],
                    ${`{${changed.map((c) => c.next).join(",")}}`}::text[]) as v(id, fp)
        where m.id = v.id`);
    }
    const [kept] = await tx
      .select({ n: sql<number>`count(*)::int` })
      .from(memories)
      .where(and(isNull(memories.subjectId), isNotNull(memories.subjectFingerprint)));
    return { checked: rows.length, rekeyed: changed.length, tombstonesKept: kept?.n ?? 0 };
  });
}

export interface ReclaimResult {
  /** The steps that ran, in order. */
  ran: string[];
  /** Steps this connection may not run (e.g. CHECKPOINT without superuser or pg_checkpoint). */
  skipped: string[];
}

/**
 * After erasure and purge the bodies are gone from every row, but their bytes stay on disk in
 * dead tuples, index pages and WAL until PostgreSQL reuses the space (docs/security.md, "Erasure
 * and disk"). This runs what an operator connection can: `VACUUM` of the memories table (or
 * `VACUUM FULL`, which rewrites the table and its indexes into new files and takes an ACCESS
 * EXCLUSIVE lock while it runs), then `CHECKPOINT` and a WAL switch so old segments can be
 * recycled. Each step runs outside a transaction, as VACUUM requires.
 */
export async function reclaimErasedSpace(
  client: Sql,
  options: { full: boolean },
): Promise<ReclaimResult> {
  const ran: string[] = [];
  const skipped: string[] = [];
  // VACUUM by a role that does not own the table only warns and does nothing: check first.
  const [owner] = await client<{ may: boolean }[]>`
    select pg_has_role(current_user, c.relowner, 'USAGE')
           or (select rolsuper from pg_roles where rolname = current_user) as may
    from pg_class c where c.oid = 'public.memories'::regclass`;
  if (!owner?.may) skipped.push(options.full ? "vacuum full" : "vacuum");
  const vacuum = options.full
    ? "VACUUM (FULL, ANALYZE) public.memories"
    : "VACUUM (ANALYZE) public.memories";
  if (owner?.may) {
    await client.unsafe(vacuum);
    ran.push(options.full ? "vacuum full" : "vacuum");
  }
  for (const [name, statement] of [
    ["checkpoint", "CHECKPOINT"],
    ["wal switch", "SELECT pg_switch_wal()"],
  ] as const) {
    try {
      await client.unsafe(statement);
      ran.push(name);
    } catch (error) {
      if ((error as { code?: string }).code !== "42501") throw error;
      skipped.push(name);
    }
  }
  return { ran, skipped };
}

/** Live memories lacking a vector from `model` (`model@dimensions`), across organisations. */
export async function memoriesToEmbed(
  db: Database,
  params: { model: string; limit: number },
): Promise<Array<{ id: string; body: string }>> {
  const rows = await db.execute<{ id: string; body: string }>(
    sql`select * from public.memories_to_embed(${params.model}, ${params.limit}::integer)`,
  );
  return [...rows];
}

/** Stores a backfilled vector; false when the memory was erased or purged meanwhile. */
export async function setMemoryEmbedding(
  db: Database,
  params: { id: string; embedding: number[]; model: string },
): Promise<boolean> {
  const vector = `{${params.embedding.join(",")}}`;
  const [row] = await db.execute<{ stored: boolean }>(
    sql`select public.set_memory_embedding(${params.id}::uuid, ${vector}::real[], ${params.model}) as stored`,
  );
  return row?.stored === true;
}
