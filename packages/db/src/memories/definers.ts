import { definerFunction, MAINTENANCE_ROLE } from "../definer.ts";
import {
  HNSW_INDEX_FORMAT,
  modelDimensionsSql,
  pgvectorCurrentSql,
  VECTOR_INDEX_INLINE_LIMIT,
  vectorIndexNameSql,
  vectorTypeSql,
} from "../vector-search.ts";
import { holdsBodySql, liveMemorySql } from "./live.ts";
export const PURGE_FUNCTION = "purge_expired_memories";

/**
 * Whether the memory `alias` belongs to a matter under legal hold, in whichever organisation
 * (SPEC §5a): the purge, which spans organisations, reads the hold itself.
 */
const IN_HOLD_ANY_ORGANIZATION = (alias: string) =>
  `EXISTS (SELECT 1 FROM public.matters mt WHERE mt.id = ${alias}.matter_id AND mt.held_since IS NOT NULL)`;

/**
 * SPEC §5a in the recall functions, which read as the owner (no row-level security): the matter
 * the call names counts only if the transaction's user may see it, decided once per call
 * (`v_matter`, null otherwise) and never per row; a candidate is then firm-wide or of that matter.
 * Recall without a matter is firm-wide only. Needs `p_matter uuid` among the parameters.
 */
const VISIBLE_MATTER =
  "v_matter uuid := CASE WHEN p_matter IS NULL THEN NULL WHEN p_matter = ANY (public.north_visible_matters()) THEN p_matter END;";

/**
 * A full-text candidate `alias` of the recall ({@link rankedSql}'s parameters): a firm-wide
 * memory matching the organisation-tagged query, or one of the visible named matter matching the
 * matter-tagged query (decision 039).
 */
const OF_SCOPE_MATCHING = (alias: string) =>
  `${alias}.matter_id IS NULL AND ${alias}.search @@ $1 OR ${alias}.matter_id = $8 AND ${alias}.search @@ $9`;

/** A semantic candidate `alias` of the recall: firm-wide, or of the visible named matter (`param`). */
const OF_RECALLED_MATTER = (alias: string, param: string) =>
  `(${alias}.matter_id IS NULL OR ${alias}.matter_id = ${param})`;

/**
 * Removes the bodies (and subject ids and embeddings) of every expired memory in every
 * organization and writes one audit row per organization purged. SECURITY DEFINER owned by
 * `forma` so the server's periodic purge, on the maintenance login, can reach all tenants; it
 * takes no argument and returns only counts. The app role may not run it.
 */
export const purgeMemoriesDefiner = definerFunction({
  name: PURGE_FUNCTION,
  grantee: MAINTENANCE_ROLE,
  params: "",
  returns: "TABLE (organization_id uuid, purged integer)",
  volatility: "VOLATILE",
  body: `BEGIN
  RETURN QUERY
    WITH erased AS (
      UPDATE public.memories m
      SET body = NULL, subject_id = NULL, embedding = NULL, purged_at = pg_catalog.now()
      WHERE m.expires_at <= pg_catalog.now() AND ${holdsBodySql("m")}
        AND NOT ${IN_HOLD_ANY_ORGANIZATION("m")}
      RETURNING m.organization_id
    ), counted AS (
      SELECT e.organization_id, count(*)::integer AS purged FROM erased e GROUP BY e.organization_id
    ), audited AS (
      INSERT INTO public.audit_events (organization_id, tool, outcome, affected)
      SELECT c.organization_id, 'north_purge', 'purged', c.purged FROM counted c
    )
    SELECT c.organization_id, c.purged FROM counted c;
END`,
});

export const TO_EMBED_FUNCTION = "memories_to_embed";

/**
 * The embeddings backfill's work list (SPEC §5: a memory stored while the provider failed is
 * embedded later), across organisations: live memories with no vector from `p_model` (none yet,
 * or another model's), newest first. A system job's door: it returns ids and bodies only to the
 * server's maintenance login, which sends them to the configured provider as it does at write
 * time. The app role may not run it: it would hand any holder of the app login every body.
 */
export const toEmbedDefiner = definerFunction({
  name: TO_EMBED_FUNCTION,
  grantee: MAINTENANCE_ROLE,
  params: "p_model text, p_limit integer",
  returns: "TABLE (id uuid, body text)",
  volatility: "STABLE",
  body: `BEGIN
  RETURN QUERY
    SELECT m.id, m.body
    FROM public.memories m
    WHERE m.body IS NOT NULL
      AND ${liveMemorySql("m")}
      AND m.embedding_model IS DISTINCT FROM p_model
    ORDER BY m.created_at DESC
    LIMIT least(greatest(p_limit, 1), 256);
END`,
});

export const SET_EMBEDDING_FUNCTION = "set_memory_embedding";

/**
 * Stores a backfilled vector, unless the memory lost its body meanwhile (erased or purged): the
 * erased-have-no-vector rule holds whatever the timing. Any organisation's memory, by id: the
 * maintenance role's alone.
 */
export const setEmbeddingDefiner = definerFunction({
  name: SET_EMBEDDING_FUNCTION,
  grantee: MAINTENANCE_ROLE,
  params: "p_id uuid, p_embedding real[], p_model text",
  returns: "boolean",
  volatility: "VOLATILE",
  body: `BEGIN
  UPDATE public.memories m
  SET embedding = p_embedding, embedding_model = p_model
  WHERE m.id = p_id AND m.body IS NOT NULL
    AND ${holdsBodySql("m")};
  RETURN FOUND;
END`,
});

export const FULLTEXT_CANDIDATES_FUNCTION = "memory_fulltext_candidates";

/** Returns one tier's arrays (`v_ids`, `v_ranks`, from {@link rankedSql}) as rows, in order. */
const RETURN_RANKED = `RETURN QUERY
    SELECT u.id, u.rank
    FROM ROWS FROM (pg_catalog.unnest(v_ids), pg_catalog.unnest(v_ranks)) WITH ORDINALITY AS u(id, rank, n)
    ORDER BY u.n;`;

/**
 * One tier of full-text recall, as the dynamic SQL `memory_fulltext_candidates` runs: of the
 * tenant's ($2) live memories, optionally one subject ($3, $4), the newest $6 matching — a
 * firm-wide memory the tsquery $1 (tagged with the organisation's prefix), a memory of the named
 * visible matter ($8) the tsquery $9 (tagged with the matter's) — best `ts_rank` first, at most
 * $5, as two arrays in that order (ids, ranks). Each memory is ranked against its own scope's
 * query, so a matter's memory ranks as a firm-wide one with the same words would. With no matter
 * ($8 and $9 null) the matter's half folds away at planning. `also` adds a condition, such as
 * leaving out the ids already found ($7). The scope conditions are explicit: the tags (decision
 * 039) give the index and the planner per-scope entries, they never decide what is read.
 */
function rankedSql(also: string): string {
  return `$q$
    SELECT pg_catalog.array_agg(c.id ORDER BY c.rank DESC, c.created_at DESC),
           pg_catalog.array_agg(c.rank ORDER BY c.rank DESC, c.created_at DESC)
    FROM (
      SELECT c.id,
             pg_catalog.ts_rank(c.search, CASE WHEN c.matter_id IS NULL THEN $1 ELSE $9 END) AS rank,
             c.created_at
      FROM (
        SELECT m.id, m.search, m.created_at, m.matter_id
        FROM public.memories m
        WHERE m.organization_id = $2
          AND ${liveMemorySql("m")}
          AND ($3::text IS NULL OR m.subject_fingerprint = $3)
          AND ($4::text IS NULL OR m.subject_type = $4)
          AND (${OF_SCOPE_MATCHING("m")}) ${also}
        ORDER BY m.created_at DESC
        LIMIT $6
      ) c
      ORDER BY rank DESC, c.created_at DESC
      LIMIT $5
    ) c$q$`;
}

/**
 * Full-text recall's ranked list (decisions 018 and 021), in one call: of the transaction
 * tenant's live memories (of one subject, if given), the newest `p_candidates` matching every
 * word of `p_query` (stemmed in the organisation's language, accents folded), best `ts_rank`
 * first; when fewer than `p_depth` have every word, the places left go to the newest
 * `p_candidates` having some of the words, ranked after them. Rows come in that order. The
 * second tier is planned only when it is needed: a one-word query, or one whose every-word list
 * is full, plans one statement.
 *
 * Why a definer function: under row-level security PostgreSQL may use an index for a condition
 * only if its operator is leakproof, and the text-search match (`@@`) is not, so the app role
 * could never use the GIN index and scanned the whole organisation for a rare word. Here the
 * owner (`forma`, RLS not forced) reads with the index, and the tenant is the transaction's own
 * (`north.organization_id`), never an argument, so no caller can name another organisation; the
 * caller then reads the rows themselves under RLS. `EXECUTE … USING` plans each call with the
 * actual query, so the planner picks between the GIN index (a rare word) and walking
 * `memories_newest` (a common one) on real estimates instead of a cached generic plan. The
 * query's lexemes carry the organisation's tag, as `memories.search` does (decision 027), so
 * the index's posting lists are this organisation's matches alone.
 */
export const fulltextCandidatesDefiner = definerFunction({
  name: FULLTEXT_CANDIDATES_FUNCTION,
  params:
    "p_query text, p_subject_fingerprint text, p_subject_type text, p_depth integer, p_candidates integer, p_matter uuid",
  returns: "TABLE (id uuid, rank real)",
  volatility: "STABLE",
  // At most p_depth (≤ 100) rows, usually the 5 a recall asks for. Left at PostgreSQL's 1,000,
  // the recall's join hashed every memory of a small organisation instead of five key lookups.
  rows: 20,
  body: `DECLARE
  v_organization_id uuid := nullif(current_setting('north.organization_id', true), '')::uuid;
  v_language text;
  v_prefix text;
  v_matter_prefix text;
  v_every tsquery;
  v_every_matter tsquery;
  v_some tsquery;
  v_some_matter tsquery;
  v_depth integer := least(greatest(p_depth, 1), 100);
  v_candidates integer := least(greatest(p_candidates, 1), 1000);
  v_ids uuid[];
  v_ranks real[];
  ${VISIBLE_MATTER}
BEGIN
  IF v_organization_id IS NULL THEN
    RAISE EXCEPTION 'no tenant in this transaction' USING ERRCODE = '42501';
  END IF;
  SELECT o.language INTO v_language FROM public.organizations o WHERE o.id = v_organization_id;
  v_prefix := public.north_tenant_prefix(v_organization_id);
  v_matter_prefix := public.north_tenant_prefix(v_matter);
  v_every := public.north_search_query(v_language, p_query, true, v_prefix);
  IF v_every IS NULL THEN
    RETURN;
  END IF;
  IF v_matter IS NOT NULL THEN
    v_every_matter := public.north_search_query(v_language, p_query, true, v_matter_prefix);
  END IF;
  EXECUTE ${rankedSql("")}
  INTO v_ids, v_ranks
  USING v_every, v_organization_id, p_subject_fingerprint, p_subject_type, v_depth, v_candidates,
        '{}'::uuid[], v_matter, v_every_matter;
  ${RETURN_RANKED}
  IF coalesce(pg_catalog.cardinality(v_ids), 0) >= v_depth THEN
    RETURN;
  END IF;
  -- Places left: the memories having some of the words. Asked only now, so a recall whose
  -- every-word list is full (or whose query is one word) plans one statement, not two.
  v_some := public.north_search_query(v_language, p_query, false, v_prefix);
  IF v_some::text = v_every::text THEN
    RETURN; -- one word: "some of the words" would find the same memories again
  END IF;
  IF v_matter IS NOT NULL THEN
    v_some_matter := public.north_search_query(v_language, p_query, false, v_matter_prefix);
  END IF;
  EXECUTE ${rankedSql("AND m.id <> ALL ($7)")}
  INTO v_ids, v_ranks
  USING v_some, v_organization_id, p_subject_fingerprint, p_subject_type,
        v_depth - coalesce(pg_catalog.cardinality(v_ids), 0), v_candidates, coalesce(v_ids, '{}'),
        v_matter, v_some_matter;
  ${RETURN_RANKED}
END`,
});

/**
 * pgvector's schema, into `v_schema`, when the database has pgvector 0.8 or later (its iterative
 * index scans are what keep one organisation's nearest memories findable in a shared index);
 * otherwise null. Needs `v_schema text` declared.
 */
const FIND_PGVECTOR = `SELECT n.nspname INTO v_schema
  FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
  WHERE e.extname = 'vector'
    AND ${pgvectorCurrentSql("e.extversion")};`;

/** Whether the index named `v_index` is there (true), left invalid (false) or absent (null). */
const INDEX_VALID = `(SELECT i.indisvalid FROM pg_catalog.pg_index i
    WHERE i.indexrelid = pg_catalog.to_regclass('public.' || pg_catalog.quote_ident(v_index)))`;

export const ENSURE_VECTOR_INDEX_FUNCTION = "ensure_memory_vector_index";

/**
 * The server's half of decision 028: once the provider has answered, the model's HNSW index, if
 * pgvector is there and the index is not. Built here, inside a transaction, only while the model
 * has at most VECTOR_INDEX_INLINE_LIMIT vectors (a new model has none), so the build holds writes
 * back for a moment at most; beyond that it answers `deferred`, and `north migrate` builds it
 * concurrently. A lock it cannot get within two seconds answers `busy` (tried again later). The
 * model key only names and filters the index: the DDL is `format()`ted with it quoted. It counts
 * and indexes every organisation's vectors: the maintenance role's alone.
 */
export const ensureVectorIndexDefiner = definerFunction({
  name: ENSURE_VECTOR_INDEX_FUNCTION,
  grantee: MAINTENANCE_ROLE,
  params: "p_model text",
  returns: "text",
  volatility: "VOLATILE",
  settings: ["lock_timeout = '2s'"],
  body: `DECLARE
  v_schema text;
  v_index text := ${vectorIndexNameSql("p_model")};
  v_dimensions integer := ${modelDimensionsSql("p_model")};
  v_type text;
  v_valid boolean;
  v_stored integer;
BEGIN
  ${FIND_PGVECTOR}
  IF v_schema IS NULL THEN
    RETURN 'unavailable';
  END IF;
  v_type := ${vectorTypeSql("v_dimensions")};
  IF v_type IS NULL THEN
    RETURN 'too-large';
  END IF;
  v_valid := ${INDEX_VALID};
  IF v_valid THEN
    RETURN 'present';
  ELSIF NOT v_valid THEN
    RETURN 'invalid';
  END IF;
  SELECT pg_catalog.count(*) INTO v_stored FROM (
    SELECT 1 FROM public.memories m WHERE m.embedding_model = p_model
    LIMIT ${VECTOR_INDEX_INLINE_LIMIT + 1}
  ) s;
  IF v_stored > ${VECTOR_INDEX_INLINE_LIMIT} THEN
    RETURN 'deferred';
  END IF;
  BEGIN
    EXECUTE pg_catalog.format('${HNSW_INDEX_FORMAT}', v_index, v_schema, v_type, v_dimensions, p_model, '');
  EXCEPTION
    WHEN lock_not_available THEN
      RETURN 'busy';
    WHEN duplicate_table OR unique_violation THEN
      RETURN 'present'; -- another server built it meanwhile
  END;
  RETURN 'created';
END`,
});

export const VECTOR_CANDIDATES_FUNCTION = "memory_vector_candidates";

/** The live memories of the tenant ($2), of one subject if given ($3, $4), embedded by the model. */
const LIVE_OF_MODEL = `m.embedding_model = %1$L AND m.organization_id = $2
        AND ${liveMemorySql("m")}
        AND ($3::text IS NULL OR m.subject_fingerprint = $3)
        AND ($4::text IS NULL OR m.subject_type = $4)
        AND ${OF_RECALLED_MATTER("m", "$8")}`;

/** Cosine distance to the query ($1), on the expression the model's HNSW index holds. */
const DISTANCE = "(m.embedding::%2$I.%3$s(%4$s)) OPERATOR(%2$I.<=>) ($1::%2$I.%3$s(%4$s))";

/**
 * Semantic recall's vector list on a server with pgvector (decision 028): the transaction
 * tenant's live memories embedded by `p_model`, nearest the query first, at most `p_depth` — or
 * null when the database has no valid HNSW index for the model, and the caller compares vectors
 * itself (decision 021). The list is ranked by exact cosine distance over three candidate sets:
 * the index's nearest `p_depth` (an iterative scan, so that the tenant and liveness filters
 * applied after the index still leave enough), the tenant's newest `p_newest` (a small
 * organisation in a large shared index is then never short of its own memories), and `p_also`
 * (the full-text candidates). A definer function for the reason `memory_fulltext_candidates` is:
 * `<=>` is not leakproof, so under row-level security the app role could not use the index.
 */
export const vectorCandidatesDefiner = definerFunction({
  name: VECTOR_CANDIDATES_FUNCTION,
  params:
    "p_query real[], p_model text, p_subject_fingerprint text, p_subject_type text, p_also uuid[], p_depth integer, p_newest integer, p_matter uuid",
  returns: "uuid[]",
  volatility: "VOLATILE", // it sets hnsw.* for the rest of the transaction
  body: `DECLARE
  v_organization_id uuid := nullif(current_setting('north.organization_id', true), '')::uuid;
  v_schema text;
  v_index text := ${vectorIndexNameSql("p_model")};
  v_dimensions integer := ${modelDimensionsSql("p_model")};
  v_depth integer := least(greatest(p_depth, 1), 100);
  v_newest integer := least(greatest(p_newest, 0), 1000);
  v_ids uuid[];
  ${VISIBLE_MATTER}
BEGIN
  IF v_organization_id IS NULL THEN
    RAISE EXCEPTION 'no tenant in this transaction' USING ERRCODE = '42501';
  END IF;
  ${FIND_PGVECTOR}
  IF v_schema IS NULL OR NOT coalesce(${INDEX_VALID}, false) THEN
    RETURN NULL;
  END IF;
  PERFORM pg_catalog.set_config('hnsw.iterative_scan', 'relaxed_order', true);
  PERFORM pg_catalog.set_config('hnsw.ef_search', greatest(v_depth * 2, 40)::text, true);
  EXECUTE pg_catalog.format($q$
    WITH nearest AS MATERIALIZED (
      SELECT m.id FROM public.memories m
      WHERE ${LIVE_OF_MODEL}
      ORDER BY ${DISTANCE}
      LIMIT $5
    ), newest AS (
      SELECT m.id FROM public.memories m
      WHERE ${LIVE_OF_MODEL}
      ORDER BY m.created_at DESC
      LIMIT $6
    )
    SELECT pg_catalog.array_agg(s.id ORDER BY s.distance, s.created_at DESC)
    FROM (
      SELECT m.id, m.created_at, ${DISTANCE} AS distance
      FROM public.memories m
      WHERE m.id IN (SELECT id FROM nearest UNION SELECT id FROM newest UNION SELECT pg_catalog.unnest($7))
        AND ${LIVE_OF_MODEL}
      ORDER BY distance, m.created_at DESC
      LIMIT $5
    ) s$q$, p_model, v_schema, ${vectorTypeSql("v_dimensions")}, v_dimensions)
  INTO v_ids
  USING p_query, v_organization_id, p_subject_fingerprint, p_subject_type, v_depth, v_newest,
        coalesce(p_also, '{}'), v_matter;
  RETURN coalesce(v_ids, '{}');
END`,
});
