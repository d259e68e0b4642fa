import type { MemoryKind, MemoryOrigin } from "@north/agent-runtime";
import { and, desc, eq, inArray, isNotNull, isNull, or, type SQL, sql } from "drizzle-orm";
import type { Tx } from "../client.ts";
import { prepareStatement, runStatement, timestampOf } from "../prepared.ts";
import { memories } from "../schema/index.ts";
import { LIVE_MEMORY } from "./live.ts";

export type RecallMode = "semantic" | "fulltext" | "recency";

export interface RecalledMemory {
  id: string;
  /** The matter it was written in, or null for a firm-wide memory. */
  matterId: string | null;
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
  /**
   * The matter the recall names (SPEC §5a): its memories come with the firm-wide ones. Without
   * one, recall is firm-wide only. The caller has checked that its user may see it; the
   * policies and the candidate functions check again.
   */
  matterId?: string;
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

export const recallColumns = {
  id: memories.id,
  kind: memories.kind,
  origin: memories.origin,
  body: memories.body,
  subjectType: memories.subjectType,
  subjectId: memories.subjectId,
  authorId: memories.authorId,
  createdAt: memories.createdAt,
  expiresAt: memories.expiresAt,
  matterId: memories.matterId,
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
    ${depth}::integer, ${FULLTEXT_CANDIDATES}::integer, ${params.matterId ?? null}::uuid
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
    matterId: string | null;
    limit: number;
  },
  RecallRow
>(
  ["organizationId", "query", "subjectFingerprint", "subjectType", "matterId", "limit"],
  (db, p) =>
    db
      .select(recallColumns)
      .from(memories)
      .innerJoin(
        sql`(select c.cid, c.n from public.memory_fulltext_candidates(
          ${p.query}, ${p.subjectFingerprint}::text, ${p.subjectType}::text,
          ${p.limit}::integer, ${FULLTEXT_CANDIDATES}::integer, ${p.matterId}::uuid
        ) with ordinality as c(cid, rank, n)) as ranked`,
        sql`ranked.cid = ${memories.id}`,
      )
      .where(
        and(
          eq(memories.organizationId, p.organizationId),
          ...LIVE_MEMORY,
          sql`(${p.subjectFingerprint}::text is null or ${memories.subjectFingerprint} = ${p.subjectFingerprint})`,
          sql`(${p.subjectType}::text is null or ${memories.subjectType} = ${p.subjectType})`,
          sql`(${memories.matterId} is null or ${memories.matterId} = ${p.matterId}::uuid)`,
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
    matterId: row.matter_id === null ? null : String(row.matter_id),
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
      matterId: params.matterId ?? null,
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
        ${`{${alsoIds.join(",")}}`}::uuid[], ${FUSION_DEPTH}::integer, ${VECTOR_CANDIDATES}::integer,
        ${params.matterId ?? null}::uuid
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
      ...LIVE_MEMORY,
      params.matterId
        ? (or(isNull(memories.matterId), eq(memories.matterId, params.matterId)) as SQL)
        : isNull(memories.matterId),
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
